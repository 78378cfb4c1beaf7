"""Whether a table's next run would change nothing: every row it would read is in the replica already, as
it is.

A clock cursor's run reads its safety window again (and the rows of NULL cursor), for late commits: a
table changed a minute ago used to run on every pass until the window had passed, reading and merging
the same rows. The check reads those rows' keys and row hashes from the source (the reconcile's hashes,
extract/reconcile/hashes.py) and compares them with the replica's rows of the same keys. All equal: a run
would merge nothing, and the pass leaves the table as it is. A row committed late into the window, a row
changed under a cursor that kept its value (a tie in the cursor's precision, a date cursor, a NULL
cursor), a row the replica lacks: each differs, and the table runs.

It looks in one direction only: a replica row the source no longer holds is a delete, which the run does
not see either. Any doubt (a failed query, a key that does not cast back, more rows than it compares)
answers "run", which is what the pass did before.

A comparison that found every row is recorded with the check (`Compared`): the rows' count and the sum of
their hashes, with a digest of the source's query of those figures and the replica's latest merge. Until
the next merge changes the replica, the next check of the same rows asks the source for the figures
alone: the same count and sum are the same rows, as a reconcile's range is, and no key or replica row is
read. Any other figure, or a merge since, compares the rows again. A replica changed outside tidemark's
merges (a write by hand) is a reconcile's to find, not this check's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import psycopg
from psycopg import sql

from extract.core.errors import SourceError
from extract.lifecycle.context import RunContext
from extract.planning.table_plan import TablePlan
from extract.reconcile.hashes import row_hashes
from extract.reconcile.replica_side import ISO_DATES_LOCAL
from extract.reconcile.source_side import exact_integer
from extract.source.dialects import Dialect
from extract.state.unchanged import Committed

#: Rows a check compares at most; a table with more to read runs.
COMPARED_ROWS = 100_000

_REPLICA = "replica."


@dataclass(frozen=True)
class Compared:
    """Source rows a check found in the replica as they are: their count and hash sum, the digest of the
    source's query of those figures, and the replica's latest merge (merge_log) when they were compared."""

    query: str
    last_merge: int | None
    rows: int
    hash_sum: int

    def as_json(self) -> str:
        return json.dumps({**asdict(self), "hash_sum": str(self.hash_sum)})

    @classmethod
    def from_json(cls, text: str | None) -> Compared | None:
        """A recorded comparison; None for none, or for one this version does not read."""
        try:
            given = json.loads(text or "null")
            merge = None if given["last_merge"] is None else int(given["last_merge"])
            return cls(str(given["query"]), merge, int(given["rows"]), int(given["hash_sum"]))
        except (TypeError, ValueError, KeyError):
            return None


def standing(committed: Committed | None) -> Compared | None:
    """A table's last comparison (`committed`'s), unless a merge changed the replica since."""
    if committed is None:
        return None
    before = Compared.from_json(committed.compared)
    return before if before is not None and before.last_merge == committed.last_merge else None


def still_merged(context: RunContext, plan: TablePlan, conditions: Sequence[str], before: Compared) -> bool:
    """Whether the source rows matching `conditions` have the count and hash sum `before` compared (its
    query the same one), asked of the source alone. The caller checks that no merge came since."""
    query = totals_query(context.dialect, context.table_ref(plan.table), conditions, _row_hash(context, plan))
    if _digest(query) != before.query:
        return False
    try:
        rows = context.source.query(query)
    except SourceError:
        return False
    return [tuple(exact_integer(value) for value in row) for row in rows] == [(before.rows,) * 2 + (before.hash_sum,)]


def merged_already(
    context: RunContext, conn: psycopg.Connection, plan: TablePlan, conditions: Sequence[str], last_merge: int | None
) -> Compared | None:
    """What was compared, when each source row matching one of `conditions` (the next run's read) is in the
    replica, as it is (`last_merge`: the replica's latest merge); else None. `conn` is the target's."""
    if not plan.source_keys or len(plan.source_keys) != len(plan.key_columns):
        return None
    hashes = row_hashes(context.dialect, plan, qualifier=_REPLICA)
    table_ref = context.table_ref(plan.table)
    query = rows_query(context.dialect, plan, table_ref, conditions, hashes.source_row)
    try:
        rows = context.source.query(query, max_rows=COMPARED_ROWS + 1)
    except SourceError:
        return None
    if len(rows) > COMPARED_ROWS or any(value is None for row in rows for value in row):
        return None
    if rows and not _replica_holds(conn, plan, hashes.replica_row, rows):
        return None
    totals = _digest(totals_query(context.dialect, table_ref, conditions, hashes.source_row))
    return Compared(totals, last_merge, len(rows), sum(int(str(row[-1])) for row in rows))


def totals_query(dialect: Dialect, table_ref: str, conditions: Sequence[str], row_hash: str) -> str:
    """One row: the count of the source rows matching one of `conditions`, of their hashes, and the sum."""
    rows = " union all ".join(f"select {row_hash} as row_hash from {table_ref} where {c}" for c in conditions)
    return f"select count(*), count(row_hash), {dialect.exact_sum('row_hash')} from ({rows}) as read_again"


def _row_hash(context: RunContext, plan: TablePlan) -> str:
    return row_hashes(context.dialect, plan, qualifier=_REPLICA).source_row


def _digest(query: str) -> str:
    return hashlib.sha256(query.encode()).hexdigest()


def rows_query(dialect: Dialect, plan: TablePlan, table_ref: str, conditions: Sequence[str], row_hash: str) -> str:
    """Rows: the key's texts (as the replica's columns take them), then the row hash (`row_hash`, the
    source's expression of it), of the source rows matching one of `conditions`."""
    keys = ", ".join(dialect.key_text(column) for column in plan.source_keys)
    # One select per condition, as the probe asks them: each can use the cursor's index.
    return " union all ".join(f"select {keys}, {row_hash} from {table_ref} where {c}" for c in conditions)


def _replica_holds(
    conn: psycopg.Connection, plan: TablePlan, row_hash: str, rows: Sequence[Sequence[str | None]]
) -> bool:
    """Whether the replica's rows of the keys of `rows` (key texts, then the source's row hash) are as
    many, with the same sum of row hashes: the replica's keys are unique, so each row is found once."""
    listed = json.dumps([dict(zip(plan.key_columns, row[:-1], strict=True)) for row in rows])
    replica = sql.Identifier(plan.names.schema, plan.names.table)
    matched = sql.SQL(" and ").join(
        sql.SQL("replica.{column} = listed.{column}").format(column=sql.Identifier(name)) for name in plan.key_columns
    )
    # The listed keys take the replica's own column types, by the columns' names: no type is spelled here.
    query = sql.SQL(
        "select count(*), coalesce(sum({row_hash}), 0) from {replica} as replica"
        " join json_populate_recordset(null::{replica}, %s) as listed on {matched}"
    ).format(row_hash=sql.SQL(row_hash), replica=replica, matched=matched)
    try:
        with conn.transaction():
            conn.execute(ISO_DATES_LOCAL)  # the row hashes' plain texts are written as the source writes them
            found = conn.execute(query, (listed,)).fetchone()
    except psycopg.Error:
        return False
    expected = sum(int(str(row[-1])) for row in rows)
    return found is not None and int(found[0]) == len(rows) and int(found[1]) == expected
