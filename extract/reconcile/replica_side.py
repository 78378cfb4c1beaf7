"""The replica's side of a reconcile: its figures and pairs, and its tombstones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.core.sql_contract import KEY_HASH_COLUMN, ROW_HASH_COLUMN, RUN_ID_COLUMN
from extract.landing.replica_locks import with_lock_timeout
from extract.planning.table_plan import TablePlan
from extract.reconcile.boundary import KeyBounds
from extract.reconcile.hashes import RowHashes
from extract.reconcile.kept_figures import KeptFigures
from extract.reconcile.queries import HashedRelation, level_query, pairs_query
from extract.reconcile.tree import Figures, HashSpace, Level, Node
from extract.reconcile.turn import PairTurn
from extract.source.dialects.postgres import PostgresDialect
from extract.source.jdbc import JdbcConnection
from extract.source.typemap import MappedColumn
from extract.state.run_log import DDL_LOCK

_TARGET = PostgresDialect()


def drop_stored_hashes(conn: psycopg.Connection, names: TargetNames) -> bool:
    """Drop the hash columns replicas kept before reconciles hashed them as they scan: every merge paid
    for them. Returns whether there were any (dropping them rewrites nothing)."""
    found = conn.execute(
        "select count(*) from pg_attribute where attrelid = to_regclass(%s) and attname in (%s, %s)"
        " and not attisdropped",
        (_TARGET.table_ref(names.schema, names.table), KEY_HASH_COLUMN, ROW_HASH_COLUMN),
    ).fetchone()
    conn.commit()
    if not found or not found[0]:
        return False

    def drop() -> None:
        conn.execute(
            sql.SQL("alter table {} drop column if exists {}, drop column if exists {}").format(
                sql.Identifier(names.schema, names.table),
                sql.Identifier(KEY_HASH_COLUMN),
                sql.Identifier(ROW_HASH_COLUMN),
            )
        )

    with_lock_timeout(conn, [_TARGET.table_ref(names.schema, names.table)], drop)
    return True


#: The replica's session writes dates as the source's JDBC session does, whatever the server's default:
#: the plain texts of both sides must match.
ISO_DATES = "set datestyle = 'ISO, YMD'"
#: The same, for the current transaction only.
ISO_DATES_LOCAL = "set local datestyle = 'ISO, YMD'"


#: What the replica's texts depend on, and the planner's costs comparison_session lowers: its JDBC session
#: (the pairs are read in the JVM) takes them from its psycopg one, whose texts a repair reads back.
_MIRRORED = (
    "DateStyle",
    "IntervalStyle",
    "TimeZone",
    "extra_float_digits",
    "bytea_output",
    "parallel_setup_cost",
    "parallel_tuple_cost",
)


def comparison_session(conn: psycopg.Connection) -> None:
    """The session of the replica's side: dates written ISO; and a level's scan shared among the server's
    parallel workers, which the planner would not choose, as it takes each hash range for a group."""
    conn.execute(ISO_DATES)
    conn.execute("set parallel_setup_cost = 0")
    conn.execute("set parallel_tuple_cost = 0")
    conn.commit()


def mirror_session(conn: psycopg.Connection, jdbc: JdbcConnection) -> None:
    """The JDBC session `jdbc`, which reads the pairs, set as the psycopg one `conn` (a query each)."""
    found = conn.execute(
        "select name, current_setting(name) from unnest(%s::text[]) as name", (list(_MIRRORED),)
    ).fetchall()
    conn.commit()
    settings = ", ".join("set_config(?, ?, false)" for _ in found)
    jdbc.query(f"select {settings}", [str(text) for setting in found for text in setting])


def replica_relation(plan: TablePlan, hashes: RowHashes, within: str = "") -> HashedRelation:
    """The replica with its hashes; `within` (SQL on its columns) leaves rows out of the comparison."""
    return HashedRelation(
        dialect=_TARGET,
        relation=_TARGET.table_ref(plan.names.schema, plan.names.table),
        key_hash=hashes.replica_key,
        row_hash=hashes.replica_row,
        key_text=hashes.replica_key_text,
        null_key="0",
        extra=tuple(f"cast({_TARGET.quote(k)} as text)" for k in plan.key_columns),
        where=within,
        ordered_key=hashes.replica_ordered_key,
        origin=hashes.origin,
    )


def compared_replica(plan: TablePlan, hashes: RowHashes, bounds: KeyBounds | None) -> tuple[HashedRelation, int | None]:
    """The replica's side of a comparison, without the rows the boundary cleanup tombstones; and, with keys
    placed by offset, the place of the source's highest key."""
    within = "" if bounds is None else ("false" if bounds.source_empty else bounds.inside)
    last_place = None
    if hashes.replica_ordered_key and bounds is not None and bounds.low is not None and bounds.high is not None:
        last_place = int(bounds.high) - int(bounds.low)
    return replica_relation(plan, hashes, within), last_place


@dataclass
class ReplicaSide:
    conn: psycopg.Connection
    side: HashedRelation
    space: HashSpace
    #: Opens the same database through JDBC, in the JVM that matches the pairs: on the first turn, so a
    #: table with nothing to repair opens none.
    open_jdbc: Callable[[], JdbcConnection]
    #: The figures the last reconcile kept of the first level (None: hash every row of it).
    kept: KeptFigures | None = None
    _jdbc: JdbcConnection | None = None

    def close(self) -> None:
        if self._jdbc is not None:
            self._jdbc.close()
            self._jdbc = None

    def level(self, level: Level) -> dict[int, Figures]:
        if level.parents is None and self.kept is not None:
            return self.kept.first_level(level)
        rows = self.conn.execute(level_query(self.side, self.space, level)).fetchall()
        self.conn.commit()
        return {int(node): Figures(int(count), int(checksum), int(nulls)) for node, count, checksum, nulls in rows}

    def pairs(self, leaves: Sequence[Node], turn: PairTurn) -> None:
        """The pairs of the ranges `leaves`, read into `turn`: every value as text, written by the server."""
        extra = "".join(f", p.tidemark_extra_{i}" for i in range(1, len(self.side.extra) + 1))
        query = (
            "select p.tidemark_key, cast(p.tidemark_key_hash as text), cast(p.tidemark_hash as text)"
            f"{extra} from ({pairs_query(self.side, self.space, leaves)}) as p"
        )
        if self._jdbc is None:
            self._jdbc = self.open_jdbc()
            mirror_session(self.conn, self._jdbc)
        self._jdbc.read_into(turn.sink, "replica", query)


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
