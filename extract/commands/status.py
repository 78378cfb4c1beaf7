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

SCHEMA_CHANGES_SHOWN = 20


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
        changes = _schema_changes(conn)
    _print_table([("table", *SHOWN), *rows])
    if changes:
        print(f"\nschema changes applied to replicas (latest {len(changes)}):")
        _print_table([("applied at", "table", "change", "column", "from", "to", "policy"), *changes])
    return 0


def _schema_changes(conn: psycopg.Connection) -> list[tuple[object, ...]]:
    """The latest changes extract/evolution made, newest first (none before the first)."""
    row = conn.execute("select to_regclass('_migration.schema_changes') is not null").fetchone()
    if not row or not row[0]:
        return []
    return conn.execute(
        "select to_char(c.applied_at, 'YYYY-MM-DD HH24:MI:SS'), coalesce(source.name, c.table_key), c.change,"
        " c.column_name, c.old_definition, c.new_definition, c.on_schema_change"
        " from _migration.schema_changes as c"
        " left join lateral (select r.source_schema || '.' || r.source_table as name from _migration.run_log as r"
        " where r.table_key = c.table_key order by r.event_id desc limit 1) as source on true"
        " order by c.change_id desc limit %s",
        (SCHEMA_CHANGES_SHOWN,),
    ).fetchall()


def _print_table(rows: Sequence[Sequence[object]]) -> None:
    text = [tuple("" if v is None else str(v) for v in row) for row in rows]
    widths = [max(len(row[i]) for row in text) for i in range(len(text[0]))]
    for line in text:
        print("  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())
