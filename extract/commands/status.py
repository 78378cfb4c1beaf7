"""`python -m extract status`: the committed state per table, as dbt's _migration_state shows it, and the
schema changes applied to replicas; `--history [TABLE]`: the last runs, each with its kind, status, rows,
the counts of the merge that took it, durations and error; `--json` for a scheduler."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.rows import dict_row

from extract.config.settings import state_key_from_env, state_schema_from_env, target_from_env
from extract.core.errors import TidemarkError
from extract.core.state_schema import StateSchema
from extract.files.checkpoint import checkpoint_summary
from extract.state.key_values import readable, reveal, shown

#: The columns of _migration._migration_state shown, in this order.
SHOWN = (
    "sync_status",
    "migration_type",
    "rows_landed",
    "rows_inserted",
    "rows_updated",
    "rows_unchanged",
    "rows_deleted",
    "last_sync_timestamp",
    "last_sync_end",
    "sync_duration_seconds",
    "error_message",
)

SCHEMA_CHANGES_SHOWN = 20

#: The last runs (of one table), newest first.
_HISTORY = """
select
    source_schema || '.' || source_table as "table",
    run_id,
    migration_type as kind,
    status,
    rows_landed,
    rows_inserted,
    rows_updated,
    rows_unchanged,
    rows_deleted,
    started_at,
    ended_at,
    round(extract(epoch from ended_at - started_at)::numeric, 3) as landing_seconds,
    merged_at,
    round(extract(epoch from merged_at - merge_started_at)::numeric, 3) as merge_seconds,
    error_message
from {run_history}
where %(table)s::text is null or lower(source_schema || '.' || source_table) = lower(%(table)s::text)
order by run_id desc
limit %(limit)s
"""


def _limit(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 10000, not {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m extract status", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--history",
        nargs="?",
        const="",
        metavar="TABLE",
        help="the last runs (of TABLE, SCHEMA.TABLE, or of every table) instead of the state per table",
    )
    parser.add_argument("--limit", type=_limit, default=20, help="how many runs --history shows (default 20)")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="with where each table's latest run has read to (key values, decrypted with TIDEMARK_STATE_KEY)",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    target, state = target_from_env(), state_schema_from_env()
    with psycopg.connect(target.libpq_url, row_factory=dict_row) as conn:
        try:
            if args.history is not None:
                table = args.history or None
                runs = conn.execute(state.sql(_HISTORY), {"table": table, "limit": args.limit}).fetchall()
                if table is not None and not runs:
                    raise TidemarkError(f"no run of table {table!r} in {target.display}")
                _show({"runs": runs}, args.json)
                return 0
            tables = _tables(conn, state, args.verbose)
        except psycopg.errors.UndefinedTable:
            raise TidemarkError(f"no state in {target.display} yet: run the extract, then dbt build") from None
        changes = _schema_changes(conn, state)
        files = checkpoint_summary(conn, state)
    _show({"tables": tables, "file_sources": files, "schema_changes": changes}, args.json)
    return 0


def _tables(conn: psycopg.Connection[dict[str, Any]], state: StateSchema, verbose: bool) -> list[dict[str, Any]]:
    """The state model's row per table; `verbose`: with the latest run's partition positions (key values)."""
    extra = ", {reveal}(partition_positions) as partition_positions" if verbose else ""
    rows = conn.execute(
        state.sql(
            "select source_schema || '.' || source_table as \"table\", "
            + ", ".join(SHOWN)
            + extra
            + " from {_migration_state} order by 1",
            reveal=reveal(state, verbose and readable(conn, state, state_key_from_env())),
        )
    ).fetchall()
    return [{**row, "partition_positions": shown(row["partition_positions"])} if verbose else row for row in rows]


def _schema_changes(conn: psycopg.Connection[dict[str, Any]], state: StateSchema) -> list[dict[str, Any]]:
    """The latest changes extract/evolution made, newest first (none before the first)."""
    if not state.has(conn, "schema_changes"):
        return []
    return conn.execute(
        state.sql(
            'select c.applied_at, coalesce(source.name, c.table_key) as "table", c.change,'
            ' c.column_name as "column", c.old_definition as "from", c.new_definition as "to",'
            " c.on_schema_change as policy"
            " from {schema_changes} as c"
            " left join lateral (select r.source_schema || '.' || r.source_table as name from {run_log} as r"
            " where r.table_key = c.table_key order by r.event_id desc limit 1) as source on true"
            " order by c.change_id desc limit %s"
        ),
        (SCHEMA_CHANGES_SHOWN,),
    ).fetchall()


def _plain(value: object) -> object:
    """A value as JSON holds it: times in ISO 8601, decimals as numbers."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


#: What a section after the first is called, above its table.
_TITLES = {
    "file_sources": "file sources, as their checkpoints hold them",
    "schema_changes": "schema changes applied to replicas",
}


def _show(sections: dict[str, list[dict[str, Any]]], as_json: bool) -> None:
    if as_json:
        plain = {name: [{k: _plain(v) for k, v in row.items()} for row in rows] for name, rows in sections.items()}
        print(json.dumps(plain, indent=2))
        return
    for index, (name, rows) in enumerate(sections.items()):
        if index == 0:
            print_table(rows)
        elif rows:
            latest = f" (latest {len(rows)})" if name == "schema_changes" else ""
            print(f"\n{_TITLES[name]}{latest}:")
            print_table(rows)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return json.dumps(value) if isinstance(value, dict) else str(value)


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        print("(none)")
        return
    names = list(rows[0])
    text = [names, *([_text(row[name]) for name in names] for row in rows)]
    widths = [max(len(line[i]) for line in text) for i in range(len(names))]
    for line in text:
        print("  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())
