"""The key values the logs keep of a stream, as `state show --verbose` and `status --verbose` show them: the
partition positions of the latest run read in key ranges, the latest deleted keys and key changes. Decrypted
where the state schema is protected and the key is given; without the key, each encrypted value is shown as
ENCRYPTED."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from extract.core.errors import TidemarkError, first_line
from extract.core.state_schema import StateSchema
from extract.state.protection import ENCRYPTED, is_protected

#: How an encrypted value starts (extract/state/schema.sql, tidemark_protect).
ENCRYPTED_PREFIX = "tidemark:pgp:"
#: The most deleted keys and key changes shown.
SHOWN = 20

_PARTITIONS = (
    "select partition_no, segment, {reveal}(start_position) as start_position, {reveal}(end_position) as end_position"
    " from {partition_log} where run_id = ("
    "   select max(p.run_id) from {partition_log} as p"
    "   where p.run_id in (select run_id from {run_log} where table_key = %(table)s) and p.end_position is not null"
    " ) order by partition_no"
)
_DELETED = (
    "select run_id, {reveal_json}(key) as key, deleted_at from {delete_log} where table_key = %(table)s"
    " order by delete_id desc limit %(shown)s"
)
_MOVED = (
    "select run_id, {reveal_json}(old_key) as old_key, {reveal_json}(new_key) as new_key, changed_at"
    " from {key_change_log} where table_key = %(table)s order by key_change_id desc limit %(shown)s"
)


def readable(conn: psycopg.Connection[Any], state: StateSchema, key: str | None) -> bool:
    """Whether the key values can be read: the schema keeps them clear, or the key is given."""
    return key is not None or not is_protected(conn, state)


def reveal(state: StateSchema, readable: bool, json: bool = False) -> sql.Composable:
    """What a key value column is read through: tidemark_reveal(_json), or nothing (then `shown` marks it)."""
    if not readable:
        return sql.SQL("")
    return state.relation("tidemark_reveal_json" if json else "tidemark_reveal")


def shown(value: object) -> object:
    """A value read without the key: ENCRYPTED if it is encrypted."""
    return ENCRYPTED if isinstance(value, str) and value.startswith(ENCRYPTED_PREFIX) else value


def key_values(conn: psycopg.Connection[Any], state: StateSchema, table_key: str, key: str | None) -> dict[str, Any]:
    can_read = readable(conn, state, key)
    names = {"reveal": reveal(state, can_read), "reveal_json": reveal(state, can_read, json=True)}
    found: dict[str, Any] = {}
    try:
        for section, query in (("partitions", _PARTITIONS), ("deleted_keys", _DELETED), ("key_changes", _MOVED)):
            with conn.cursor(row_factory=tuple_row) as cursor:
                cursor.execute(state.sql(query, **names), {"table": table_key, "shown": SHOWN})
                columns = [c.name for c in cursor.description or []]
                found[section] = [
                    {c: _plain(shown(v)) for c, v in zip(columns, row, strict=True)} for row in cursor.fetchall()
                ]
    except psycopg.Error as exc:
        raise TidemarkError(first_line(exc)) from None
    return found


def _plain(value: object) -> object:
    return value.isoformat() if hasattr(value, "isoformat") else value
