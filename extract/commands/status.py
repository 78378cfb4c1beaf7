"""`python -m extract status`: the committed state per table, as dbt's _migration_state shows it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import psycopg

from extract.config.settings import target_from_env
from extract.core.errors import TidemarkError

SHOWN = (
    "sync_status",
    "migration_type",
    "rows_landed",
    "rows_inserted",
    "rows_updated",
    "rows_unchanged",
    "rows_deleted",
    "last_sync_timestamp",
)


def main(argv: Sequence[str]) -> int:
    argparse.ArgumentParser(prog="python -m extract status", description=__doc__).parse_args(argv)
    target = target_from_env()
    with psycopg.connect(target.libpq_url) as conn:
        try:
            rows = conn.execute(
                "select source_schema || '.' || source_table, "
                + ", ".join(SHOWN)
                + " from _migration._migration_state order by 1"
            ).fetchall()
        except psycopg.errors.UndefinedTable:
            raise TidemarkError(f"no state in {target.display} yet: run the extract, then dbt build") from None
    table = [("table", *SHOWN)] + [tuple("" if v is None else str(v) for v in row) for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(SHOWN) + 1)]
    for row in table:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip())
    return 0
