"""The docs and configuration dbt reads for each replica: its model (columns described by what matters:
source column and type, key, cursor, record id, and why a mapping loses something), its dbt snapshot
(SCD2 history) and its as-of history. Names reach them only as YAML strings dbt renders back to
themselves (`dbt_text`) or as quoted identifiers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from extract.config.naming import ASOF_HISTORY_SUFFIX
from extract.core.quoting import dbt_text, jinja_string, postgres_identifier
from extract.core.sql_contract import HISTORY_SUFFIX, UNCOMPARABLE_TYPES
from extract.planning.table_plan import TablePlan
from extract.source.typemap import MappedColumn


def texts(values: Sequence[str]) -> list[str]:
    return [dbt_text(value) for value in values]


def asof_history_doc(plan: TablePlan) -> dict[str, Any]:
    names = plan.names
    return {
        "name": names.model_name + ASOF_HISTORY_SUFFIX,
        "description": dbt_text(
            f"SCD type-2 history of {plan.table.qualified} from full snapshots as of any date, applied in any order "
            "(python -m extract --table ... --snapshot-date ...). valid_from inclusive, valid_to exclusive, "
            "NULL valid_to: current."
        ),
        "config": {
            "materialized": "tidemark_asof_history",
            "schema": names.schema,
            "alias": names.asof_history_table,
            "unique_key": texts(plan.key_columns),
            "snapshots_of": names.table_key,
        },
        "data_tests": [{"tidemark.versions_do_not_overlap": {"arguments": {"key_columns": texts(plan.key_columns)}}}],
        "columns": [
            {
                "name": "valid_from",
                "description": "The first snapshot date of this version (inclusive).",
                "data_tests": ["not_null"],
            },
            {
                "name": "valid_to",
                "description": "The first snapshot date it no longer held (exclusive); NULL: current.",
            },
        ],
    }


def _column_description(plan: TablePlan, col: MappedColumn) -> str:
    """What matters of a column: its source column and type, its role (key, cursor, record id), and
    why its mapping loses something, as the type map's notes say."""
    said = [f"{col.source.name} ({col.source.type_text}{'' if col.source.nullable else ' not null'}) in the source."]
    if col.target_name in plan.key_columns:
        said.append("Part of the primary key." if len(plan.key_columns) > 1 else "The primary key.")
    if plan.cursor is not None and col.source.name == plan.cursor.name:
        said.append("The cursor: each run reads the rows whose value moved past the committed watermark.")
    if col.source.name == plan.config.record_id:
        said.append("The record id: a row whose key changes keeps it, and moves with it.")
    if col.note:
        said.append(f"Mapped to {col.target_type}: {col.note.rstrip('.')}.")
    return " ".join(said)


def _column_doc(plan: TablePlan, index: int) -> dict[str, Any]:
    col = plan.columns[index]
    doc: dict[str, Any] = {
        "name": dbt_text(col.target_name),
        "description": dbt_text(_column_description(plan, col)),
        "data_type": dbt_text(col.target_type),
    }
    return doc


def model_doc(plan: TablePlan) -> dict[str, Any]:
    cursor = plan.cursor.name if plan.cursor else None
    how = f"incremental on {cursor}" if cursor else "full refresh every run (no cursor column)"
    if plan.config.reader == "files":
        how = "incremental by a checkpoint of every file"
    doc: dict[str, Any] = {
        "name": plan.names.model_name,
        "description": dbt_text(f"Replica of {plan.origin}, {how}; key ({', '.join(plan.table.primary_key)})."),
        "config": {"schema": plan.names.schema, "alias": plan.names.table, "unique_key": texts(plan.key_columns)},
        "columns": [_column_doc(plan, i) for i in range(len(plan.columns))],
    }
    if plan.record_column is not None:
        doc["config"]["tidemark_record_id"] = dbt_text(plan.record_column)
    if plan.unique_key_columns:
        doc["config"]["tidemark_unique_keys"] = [texts(columns) for columns in plan.unique_key_columns]
    # No data test of the key: the replica's merge checks that PostgreSQL enforces it (a primary key or
    # unique index on exactly the key, NOT NULL), at no cost, where a test would be a node of its own.
    return doc


def without_snapshot(plan: TablePlan) -> str | None:
    """Why the table gets no dbt snapshot, or None. dbt's snapshot materialization quotes column names
    with adapter.quote, which does not double a `"` inside a name: such a column would break its SQL."""
    quoted = [c.target_name for c in plan.columns if '"' in c.target_name]
    if not quoted:
        return None
    return (
        f"{plan.table.qualified} gets no dbt snapshot ({plan.names.model_name}{HISTORY_SUFFIX}): its column "
        f"{quoted[0]!r} holds a double quote, which dbt's snapshot materialization does not escape; "
        "its replica is kept as usual, and an as-of history (asof_history) can keep its history"
    )


def snapshot_doc(plan: TablePlan) -> dict[str, Any]:
    checkable = [
        c.target_name
        for c in plan.columns
        if c.target_name not in plan.key_columns and not c.target_type.startswith(UNCOMPARABLE_TYPES)
    ]
    return {
        "name": plan.names.model_name + HISTORY_SUFFIX,
        "relation": f"ref({jinja_string(plan.names.model_name)})",
        "description": dbt_text(f"SCD type-2 history of {plan.origin}"),
        "config": {
            "schema": plan.names.schema,
            "alias": plan.names.table + HISTORY_SUFFIX,
            # dbt puts these names into SQL as they are: quote them, keywords included.
            "unique_key": texts([postgres_identifier(k) for k in plan.key_columns]),
            "strategy": "check",
            "check_cols": texts([postgres_identifier(c) for c in checkable]) or "all",
            "hard_deletes": "invalidate",
            # Built by tidemark's history materialization, which compares the keys the replica's merges
            # changed (dbt_package/macros/history/, through the project's snapshot materialization).
            "tidemark_replica": texts([plan.names.schema, plan.names.table]),
            "pre_hook": "{{ tidemark.tidemark_history_lock() }}",
            "post_hook": "{{ tidemark.tidemark_history_compared() }}",
        },
    }
