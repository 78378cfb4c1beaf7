"""The replica's side of a reconcile: its stored hashes, its figures and pairs, and its tombstones."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.sql_contract import KEY_HASH_COLUMN, ROW_HASH_COLUMN, RUN_ID_COLUMN
from extract.landing.replica_locks import with_lock_timeout
from extract.planning.table_plan import TablePlan
from extract.reconcile.hashes import RowHashes
from extract.reconcile.queries import HashedRelation, level_query, pairs_query
from extract.reconcile.tree import Figures, HashSpace, Level, Node
from extract.source.dialects.postgres import PostgresDialect
from extract.source.typemap import MappedColumn
from extract.state.run_log import DDL_LOCK

_TARGET = PostgresDialect()

#: Replica rows as text: key text, row hash, then each key column as the replica's own text.
ReplicaPair = tuple[str | None, ...]


def _fingerprint(hashes: RowHashes) -> str:
    return "tidemark hashes " + hashlib.sha256((hashes.replica_key + hashes.replica_row).encode()).hexdigest()[:16]


def ensure_hash_columns(conn: psycopg.Connection, names: TargetNames, hashes: RowHashes) -> bool:
    """Give the replica its key and row hash as generated columns, unless it has these already.
    Returns whether they were (re)built: that rewrites the table once."""
    table = sql.Identifier(names.schema, names.table)
    found = conn.execute(
        "select col_description(to_regclass(%s)::oid, a.attnum) from pg_attribute as a"
        " where a.attrelid = to_regclass(%s) and a.attname = %s and not a.attisdropped",
        (_TARGET.table_ref(names.schema, names.table),) * 2 + (ROW_HASH_COLUMN,),
    ).fetchone()
    conn.commit()
    if found is not None and found[0] == _fingerprint(hashes):
        return False

    def rebuild() -> None:
        conn.execute(
            sql.SQL(
                "alter table {} drop column if exists {key}, drop column if exists {row},"
                " add column {key} bigint generated always as ({key_sql}) stored,"
                " add column {row} bigint generated always as ({row_sql}) stored"
            ).format(
                table,
                key=sql.Identifier(KEY_HASH_COLUMN),
                row=sql.Identifier(ROW_HASH_COLUMN),
                key_sql=sql.SQL(hashes.replica_key),  # built from quoted names and fixed forms only
                row_sql=sql.SQL(hashes.replica_row),
            )
        )
        conn.execute(
            sql.SQL("comment on column {}.{} is {}").format(
                table, sql.Identifier(ROW_HASH_COLUMN), sql.Literal(_fingerprint(hashes))
            )
        )

    with_lock_timeout(conn, [_TARGET.table_ref(names.schema, names.table)], rebuild)
    return True


def replica_relation(plan: TablePlan, hashes: RowHashes, within: str = "") -> HashedRelation:
    """The replica with its stored hashes; `within` (SQL on its columns) leaves rows out of the comparison."""
    ref = _TARGET.table_ref(plan.names.schema, plan.names.table)
    relation = ref if not within else f"(select * from {ref} where {within}) as replica"
    return HashedRelation(
        dialect=_TARGET,
        relation=relation,
        key_hash=_TARGET.quote(KEY_HASH_COLUMN),
        row_hash=_TARGET.quote(ROW_HASH_COLUMN),
        key_text=hashes.replica_key_text,
        null_key="0",
        extra=tuple(f"cast({_TARGET.quote(k)} as text)" for k in plan.key_columns),
    )


@dataclass
class ReplicaSide:
    conn: psycopg.Connection
    side: HashedRelation
    space: HashSpace

    def level(self, level: Level) -> dict[int, Figures]:
        rows = self.conn.execute(level_query(self.side, self.space, level)).fetchall()
        self.conn.commit()
        return {int(node): Figures(int(count), int(checksum), int(nulls)) for node, count, checksum, nulls in rows}

    def pairs(self, leaves: Sequence[Node]) -> list[ReplicaPair]:
        rows = self.conn.execute(pairs_query(self.side, self.space, leaves)).fetchall()
        self.conn.commit()
        return [tuple(None if v is None else str(v) for v in row) for row in rows]


def ensure_tombstone_table(conn: psycopg.Connection, names: TargetNames, keys: Sequence[MappedColumn]) -> None:
    """The UNLOGGED table a reconcile lands its tombstones in: the key columns and the run."""
    columns = [sql.SQL("{} " + c.target_type).format(sql.Identifier(c.target_name)) for c in keys]
    columns.append(sql.SQL("{} bigint not null").format(sql.Identifier(RUN_ID_COLUMN)))
    with conn.transaction():
        conn.execute(DDL_LOCK)
        conn.execute(
            sql.SQL("create unlogged table if not exists {} ({})").format(
                sql.Identifier(names.schema, names.tombstone_table), sql.SQL(", ").join(columns)
            )
        )


def land_tombstones(
    conn: psycopg.Connection, names: TargetNames, keys: Sequence[MappedColumn], rows: Sequence[Sequence[str]], run: int
) -> None:
    """COPY the keys (each column as the replica's own text, which casts back exactly) with the run."""
    statement = sql.SQL("copy {} ({}) from stdin").format(
        sql.Identifier(names.schema, names.tombstone_table),
        sql.SQL(", ").join(sql.Identifier(c) for c in [*(k.target_name for k in keys), RUN_ID_COLUMN]),
    )
    with conn.transaction(), conn.cursor().copy(statement) as copy:
        for row in rows:
            copy.write_row([*row, run])
