"""The emulated CDC's instances taken away, and their old changes cleaned up (extract/devtools/cdc.py)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.source.dialects.postgres import CDC_SCHEMA as SCHEMA


def disable_table(conn: psycopg.Connection, schema: str, table: str, capture_instance: str) -> None:
    """sys.sp_cdc_disable_table: the instance, its change table and its function are gone."""
    relation = sql.Identifier(schema, table)
    for event in ("insert", "update", "delete"):
        conn.execute(
            sql.SQL("drop trigger {} on {}").format(sql.Identifier(f"cdc_{capture_instance}_{event}"), relation)
        )
    conn.execute(
        sql.SQL("drop function {}").format(sql.Identifier(SCHEMA, f"fn_cdc_get_all_changes_{capture_instance}"))
    )
    conn.execute(sql.SQL("drop table {}").format(sql.Identifier(SCHEMA, f"{capture_instance}_CT")))
    for catalog in ("change_tables", "captured_columns"):
        conn.execute(
            sql.SQL("delete from {} where capture_instance = %s").format(sql.Identifier(SCHEMA, catalog)),
            (capture_instance,),
        )


def clean_up(conn: psycopg.Connection, capture_instance: str, low_water_mark: int | None = None) -> int:
    """sys.sp_cdc_cleanup_change_table: the instance's changes below `low_water_mark` (the highest LSN
    captured, when None) are dropped, and its minimum LSN raised to it. Returns the new minimum."""
    schema = sql.Identifier(SCHEMA)
    row = conn.execute(
        sql.SQL("select coalesce(cast(%s as bigint), {}.fn_cdc_get_max_lsn() + 1)").format(schema), (low_water_mark,)
    ).fetchone()
    assert row is not None
    mark = int(row[0])
    conn.execute(
        sql.SQL("delete from {} where {} < %s").format(
            sql.Identifier(SCHEMA, f"{capture_instance}_CT"), sql.Identifier("__$start_lsn")
        ),
        (mark,),
    )
    conn.execute(
        sql.SQL("update {}.change_tables set min_lsn = greatest(min_lsn, %s) where capture_instance = %s").format(
            schema
        ),
        (mark, capture_instance),
    )
    return mark
