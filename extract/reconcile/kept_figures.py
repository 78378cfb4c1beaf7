"""The replica's figures of a reconcile's first level, kept for the next reconcile: a range none of whose
rows was written since is not hashed again.

At its first level a reconcile hashes every row of both sides; on the replica that is half the work of
one that finds nothing. But PostgreSQL writes a new row version for every insert and update, whoever
writes it (a merge, a repair, a user by hand), stamped with its transaction (xmin) at a new place in
the table (ctid). So the count of a range's row versions and the sum of a hash of their (ctid, xmin)
change whenever one of its rows does, and computing them reads no column. A range whose count and sum
are those kept with its figures keeps its figures; the others, and only they, are hashed again.

With a whole-number key, the figures kept are those of every replica row from the source's lowest key
on, whatever its highest: new keys move the highest at nearly every sync. Only the range holding the
highest key is hashed again each time, under the comparison's own limits.

What the figures were computed under is kept with them as one digest: the level's query (the hash
expressions, the key's origin, the ranges, the rows compared), the session's settings that change a
value's text, the server's version, and the table's identity and file. TRUNCATE, VACUUM FULL, CLUSTER
and a rewriting ALTER TABLE give the table a new file, whose row versions may repeat the old places and
transactions. Under any other digest nothing kept is used.

The figures live in an UNLOGGED table beside the replica: after a crash it is empty, and the next
reconcile hashes every row, as it would without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.reconcile.queries import HashedRelation, level_query, node_expression, places_slice, versions_query
from extract.reconcile.tree import Figures, HashSpace, Level, Node
from extract.state.run_log import DDL_LOCK

#: Changes whenever its row is written: a new row version has a new place or a new transaction, or both.
#: The place is hashed with the transaction's hash as its seed: no text is written (a tenth of the cost).
ROW_VERSION = "hashtidextended(ctid, hashxid(xmin))"
#: Settings a value's text depends on, and the server version, whose float texts have changed before.
_DIGESTED_SETTINGS = (
    "DateStyle",
    "IntervalStyle",
    "TimeZone",
    "extra_float_digits",
    "bytea_output",
    "lc_monetary",
    "server_version_num",
)
#: Up to this many ranges hashed again are read as key ranges of the replica's index, not by a full scan.
_KEY_RANGES_AT_MOST = 64
_COLUMNS = ("tidemark_node", "tidemark_rows", "tidemark_checksum", "tidemark_null_keys", "tidemark_version")


def _reference(conn: psycopg.Connection, names: TargetNames) -> str:
    """The kept figures' table, as to_regclass reads it."""
    return sql.Composed([sql.Identifier(names.schema, names.kept_figures_table)]).as_string(conn)


def kept_rows(conn: psycopg.Connection, names: TargetNames) -> int | None:
    """The replica's rows the kept figures count (from the lowest key on); None when nothing is kept."""
    found = conn.execute("select to_regclass(%s) is not null", (_reference(conn, names),)).fetchone()
    row = None
    if found is not None and found[0]:
        table = sql.Identifier(names.schema, names.kept_figures_table)
        row = conn.execute(sql.SQL("select sum({}) from {}").format(sql.Identifier(_COLUMNS[1]), table)).fetchone()
    conn.commit()
    return None if row is None or row[0] is None else int(row[0])


@dataclass(frozen=True, slots=True)
class KeptRange:
    figures: Figures
    version: int


@dataclass
class KeptFigures:
    """The first level of one replica's comparison, with what the last reconcile kept of it."""

    conn: psycopg.Connection
    names: TargetNames
    side: HashedRelation
    space: HashSpace
    #: Whether to keep this reconcile's figures (a dry run writes nothing).
    store: bool
    say: Callable[[str], None]
    #: With places by offset, the highest key's place (the source's highest key less its lowest).
    last_place: int | None = None

    def first_level(self, level: Level) -> dict[int, Figures]:
        """The replica's figures of `level` (a first level): kept ones where nothing was written since."""
        digest = self._digest(level)
        kept = self._load(digest)
        side = self._kept_side
        if kept is None:
            ranges = self._hash(level, side, "")
            written = set(ranges)
        else:
            ranges, written = self._refresh(level, side, kept)
        if self.store:
            self._keep(digest, ranges)
        if side is not self.side and self.last_place is not None:
            edge = self.last_place // self.space.divisor(level.depth)
            ranges = {node: kept_range for node, kept_range in ranges.items() if node < edge}
            ranges.update(self._hash(level, self.side, places_slice(self.side, self.space, [Node(level.depth, edge)])))
            written = {node for node in written if node < edge} | {edge}
        if kept is not None:
            hashed = sum(node in written for node in ranges)  # a range written since may hold no row now
            self.say(
                f"the replica's figures of {len(ranges) - hashed:,} of {len(ranges):,} ranges kept from its "
                f"last reconcile; {hashed:,} hashed again"
            )
        return {node: kept_range.figures for node, kept_range in ranges.items()}

    @property
    def _kept_side(self) -> HashedRelation:
        """The rows whose figures are kept: with places by offset, every row from the lowest key on."""
        if not self.side.ordered_key or self.last_place is None:
            return self.side
        return replace(self.side, where=f"{self.side.ordered_key} >= cast({self.side.origin} as bigint)")

    def _refresh(
        self, level: Level, side: HashedRelation, kept: dict[int, KeptRange]
    ) -> tuple[dict[int, KeptRange], set[int]]:
        """The figures of `side`'s ranges, kept ones where nothing was written since; and the others."""
        # One core: the source's side keeps the others busy, and the server's workers would only add their own.
        self.conn.execute("set local max_parallel_workers_per_gather = 0")
        versions = self.conn.execute(versions_query(side, self.space, level.depth, ROW_VERSION)).fetchall()
        self.conn.commit()
        ranges: dict[int, KeptRange] = {}
        written: list[int] = []
        for node, rows, version in versions:
            before = kept.get(int(node))
            if before is not None and (before.figures.rows, before.version) == (int(rows), int(version)):
                ranges[int(node)] = before
            else:
                written.append(int(node))
        if len(written) * 2 > len(versions):  # most of them: one scan that hashes every row costs less
            return self._hash(level, side, ""), set(written) | set(ranges)
        if written:
            ranges.update(self._hash(level, side, self._only(side, level.depth, written)))
        return ranges, set(written)

    def _only(self, side: HashedRelation, depth: int, nodes: Sequence[int]) -> str:
        """SQL on the replica's columns: the rows of the ranges `nodes` at `depth`."""
        if side.ordered_key and len(nodes) <= _KEY_RANGES_AT_MOST:
            slices = (places_slice(side, self.space, [Node(depth, node)]) for node in nodes)
            return " or ".join(f"({s})" for s in slices)
        return side.dialect.in_integers(node_expression(side, self.space, depth), nodes)

    def _hash(self, level: Level, side: HashedRelation, within: str) -> dict[int, KeptRange]:
        rows = self.conn.execute(level_query(side, self.space, level, within, ROW_VERSION)).fetchall()
        self.conn.commit()
        return {
            int(node): KeptRange(Figures(int(count), int(checksum), int(nulls)), int(version))
            for node, count, checksum, nulls, version in rows
        }

    def _digest(self, level: Level) -> str:
        found = self.conn.execute(
            "select c.oid::bigint, pg_relation_filenode(c.oid)::bigint,"
            " array(select current_setting(name) from unnest(%s::text[]) as name)"
            " from pg_class as c where c.oid = to_regclass(%s)",
            (list(_DIGESTED_SETTINGS), self.side.relation),
        ).fetchone()
        self.conn.commit()
        query = level_query(self._kept_side, self.space, level, "", ROW_VERSION)
        return hashlib.sha256(repr((query, found)).encode()).hexdigest()

    def _table(self) -> sql.Identifier:
        return sql.Identifier(self.names.schema, self.names.kept_figures_table)

    def _load(self, digest: str) -> dict[int, KeptRange] | None:
        reference = _reference(self.conn, self.names)
        found = self.conn.execute("select obj_description(to_regclass(%s), 'pg_class')", (reference,)).fetchone()
        if found is None or found[0] != digest:
            self.conn.commit()
            return None
        rows = self.conn.execute(
            sql.SQL("select {} from {}").format(sql.SQL(", ").join(map(sql.Identifier, _COLUMNS)), self._table())
        ).fetchall()
        self.conn.commit()
        return {
            int(node): KeptRange(Figures(int(count), int(checksum), int(nulls)), int(version))
            for node, count, checksum, nulls, version in rows
        }

    def _keep(self, digest: str, ranges: dict[int, KeptRange]) -> None:
        table = self._table()
        with self.conn.transaction():
            self.conn.execute(DDL_LOCK)
            self.conn.execute(
                sql.SQL(
                    "create unlogged table if not exists {} ({} bigint primary key, {} bigint not null,"
                    " {} numeric not null, {} bigint not null, {} numeric not null)"
                ).format(table, *map(sql.Identifier, _COLUMNS))
            )
        columns = sql.SQL(", ").join(map(sql.Identifier, _COLUMNS))
        with self.conn.transaction():
            self.conn.execute(sql.SQL("truncate {}").format(table))
            with self.conn.cursor().copy(sql.SQL("copy {} ({}) from stdin").format(table, columns)) as copy:
                for node, kept_range in ranges.items():
                    figures = kept_range.figures
                    copy.write_row((node, figures.rows, figures.checksum, figures.null_keys, kept_range.version))
            self.conn.execute(sql.SQL("comment on table {} is {}").format(table, sql.Literal(digest)))
        self.conn.commit()
