"""The baseline: the same rows, already formatted as COPY text, loaded with COPY FROM STDIN."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

BLOCK = 1 << 20

_TABLE = """
create unlogged table bench_baseline.items (
    id bigint, customerid integer, amount numeric(12, 2), status varchar(12), note varchar(60),
    modifieddate timestamp(3)
)
"""


def raw_copy_seconds(
    source_url: str, target_url: str, work: Path, rounds: int, before_each: Callable[[], None]
) -> tuple[int, list[float]]:
    """Rows, and the seconds of each of `rounds` runs, of `COPY FROM STDIN` of the whole source table into
    an UNLOGGED table (created afresh for each; `before_each` runs first).

    The rows are exported to a file first (not timed), so the figure is Postgres' own
    ingest speed: the ceiling for any landing, which must also read the source.
    """
    with tempfile.NamedTemporaryFile(dir=work, suffix=".copy") as dump:
        with (
            psycopg.connect(source_url) as source,
            source.cursor() as cursor,
            cursor.copy('copy bench."Items" to stdout') as copy,
        ):
            for block in copy:
                dump.write(block)
        dump.flush()
        rows, timings = 0, []
        with psycopg.connect(target_url, autocommit=True) as target:
            for _ in range(rounds):
                dump.seek(0)
                target.execute("drop schema if exists bench_baseline cascade")
                target.execute("create schema bench_baseline")
                target.execute(_TABLE)
                before_each()
                started = time.perf_counter()
                with target.cursor() as cursor:
                    with cursor.copy("copy bench_baseline.items from stdin") as copy:
                        while block := dump.read(BLOCK):
                            copy.write(block)
                    rows = cursor.rowcount
                timings.append(time.perf_counter() - started)
            target.execute("drop schema bench_baseline cascade")
    return rows, timings
