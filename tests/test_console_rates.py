"""The console's landing rates count from the read's plan, not from the run's start: a reconcile plans
its re-read only after comparing the table, which may take minutes."""

from __future__ import annotations

import io
import re
import time
from types import SimpleNamespace

from extract.console import ConsoleObserver
from extract.core.observer import Landed, PartitionLanded, Planned, RunBegan


def _run(landed: int) -> SimpleNamespace:
    return SimpleNamespace(
        run_id=7,
        migration_type="reconcile",
        cursor_column="ModifiedDate",
        watermark_used=None,
        rows_planned=1_000,
        rows_landed=landed,
        partitions_planned=2,
        partitions_landed=landed // 500,
        landed_by="driver",
        target_schema="demo",
        target_table="items",
        watermark_candidate=None,
    )


def test_rates_count_from_the_plan() -> None:
    stream = io.StringIO()
    console = ConsoleObserver(stream=stream, bars=False)
    console(RunBegan("dbo.Items", _run(0), False, None))
    time.sleep(1.0)  # the comparison before the re-read
    console(Planned("dbo.Items", _run(0)))
    console(PartitionLanded("dbo.Items", _run(500)))
    console(Landed("dbo.Items", _run(1_000)))
    said = stream.getvalue()
    took = re.search(r"landed 1,000 rows in demo\.stg__items in ([0-9.]+)s", said)
    assert took is not None, said
    assert float(took.group(1)) < 0.5
