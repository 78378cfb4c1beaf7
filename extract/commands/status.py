"""`python -m extract status`: the committed state per table, as dbt's _migration_state shows it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import psycopg

from extract.settings import target_from_env

import os

COLUMNS = (
    "source_schema",
    "source_table",
    "target_schema",
    "target_table",
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
    target = target_from_env(os.environ)
    with psycopg.connect(target.libpq_url) as conn:
        rows = conn.execute(
            "select " + ", ".join(COLUMNS) + " from _migration._migration_state order by source_schema, source_table"
        ).fetchall()
    table = [COLUMNS[1:2] + COLUMNS[4:]] + [
        (f"{r[0]}.{r[1]}",) + tuple("" if v is None else str(v) for v in r[4:]) for r in rows
    ]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)))
    return 0
