"""The keys a reconcile repairs, written to the target as each turn of the comparison finds them rather
than held in the driver, whose memory then does not grow with the differences (at 1% of 10,000,000
rows they were about 30 MB of Python objects).

Tombstones go straight to the table the merge reads them from, under the run: a run that fails has
them cleared as any failed run's rows. The keys to re-read go to a temporary table of the run's
session, with the source's positions that re-read them and the row hash each had when compared, which
the re-check compares with what lands (extract/reconcile/repair.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from extract.config.naming import TargetNames
from extract.reconcile.classify import TurnRepairs
from extract.reconcile.replica_side import land_tombstones
from extract.source.typemap import MappedColumn

#: The temporary table of the keys to re-read (the run's session's own: nothing else sees it).
UPSERT_KEYS = "tidemark_reconcile_upserts"


def upsert_keys_table() -> sql.Composable:
    return sql.Identifier("pg_temp", UPSERT_KEYS)


@dataclass
class RepairKeys:
    """The keys of run `run_id`'s repairs, kept through the run's connection `conn`."""

    conn: psycopg.Connection
    names: TargetNames
    keys: Sequence[MappedColumn]
    run_id: int
    written: int = 0

    def open(self) -> None:
        """A fresh table of keys to re-read: a session may have reconciled another table before."""
        self.conn.execute(sql.SQL("drop table if exists {}").format(upsert_keys_table()))
        columns = sql.SQL("ordinal bigint, key_text text, positions text[], compared text")
        self.conn.execute(sql.SQL("create temporary table {} ({})").format(upsert_keys_table(), columns))
        self.conn.commit()

    def __call__(self, found: TurnRepairs) -> None:
        """Keys of a turn, committed: the landing's own connections read the tombstones' table."""
        if found.upserts:
            statement = sql.SQL("copy {} (ordinal, key_text, positions, compared) from stdin").format(
                upsert_keys_table()
            )
            with self.conn.cursor().copy(statement) as copy:
                copy.set_types(["bigint", "text", "text[]", "text"])
                for ordinal, (key, positions, compared) in enumerate(found.upserts, start=self.written):
                    copy.write_row((ordinal, key, list(positions), compared))
            self.written += len(found.upserts)
        if found.tombstones:
            land_tombstones(self.conn, self.names, self.keys, found.tombstones, self.run_id)
        self.conn.commit()

    def positions(self, batch: int) -> Iterator[list[tuple[str, ...]]]:
        """The source's positions of the keys to re-read, `batch` keys at a time, in the order found."""
        with self.conn.cursor(name="tidemark_upsert_positions") as cursor:
            cursor.itersize = batch
            cursor.execute(sql.SQL("select positions from {} order by ordinal").format(upsert_keys_table()))
            while rows := cursor.fetchmany(batch):
                yield [tuple(row[0]) for row in rows]
        self.conn.commit()


def ignore_keys(found: TurnRepairs) -> None:
    """A dry run's keeper: the classifier has counted the turn's keys and kept samples; nothing lands."""
    return None
