"""Compare each replica with its source: row counts and a content checksum computed inside each database.

Both sides render every column as the canonical text of the replica's type (integers
in decimal, decimals without trailing zeros, timestamps as YYYY-MM-DDTHH:MM:SS.ffffff,
booleans true/false, binary as lower-case hex, char(n) with its padding), join a row's
columns with U+001F (NULL as \\N), and sum the first 64 bits of each row's md5. Only
two numbers per side cross the network, whatever the table's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg

from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.source.dialects.postgres import PostgresDialect
from extract.source.dialects.postgres_canonical import canonical_text

_TARGET = PostgresDialect()


@dataclass(frozen=True)
class Verification:
    table: str
    replica: str
    source_rows: int
    replica_rows: int | None
    source_checksum: str
    replica_checksum: str | None

    @property
    def ok(self) -> bool:
        return self.source_rows == self.replica_rows and self.source_checksum == self.replica_checksum


#: Replica type prefix -> canonical form, first match wins.
_PREFIX_KINDS = (
    ("numeric", "decimal"),
    ("double precision", "float"),
    ("real", "float"),
    ("timestamptz", "timestamptz"),
    ("timestamp", "timestamp"),
    ("date", "date"),
    ("time", "time"),
    ("boolean", "bool"),
    ("bytea", "bytes"),
    ("uuid", "uuid"),
)
#: Every form `kind_of` gives.
CANONICAL_KINDS = frozenset({"char", "int", "text"} | {kind for _, kind in _PREFIX_KINDS})


def kind_of(target_type: str) -> tuple[str, int | None]:
    """The canonical text form for a replica column type."""
    t = target_type.lower()
    char = re.match(r"^char\((\d+)\)$", t)
    if char:
        return "char", int(char.group(1))
    if t in {"smallint", "integer", "bigint"}:
        return "int", None
    for prefix, kind in _PREFIX_KINDS:
        if t.startswith(prefix):
            return kind, None
    return "text", None


def source_figures(planner: Planner, plan: TablePlan) -> tuple[int, str]:
    """The source's row count and content checksum, computed in the source."""
    kinds = [kind_of(c.target_type) for c in plan.columns]
    source_sql = planner.context.dialect.checksum_query(
        plan.table.schema,
        plan.table.name,
        [planner.context.dialect.canonical_text(c.source, k, n) for c, (k, n) in zip(plan.columns, kinds, strict=True)],
    )
    rows, checksum = planner.context.source.query(source_sql)[0]
    return int(rows or 0), str(checksum)


def replica_canonical_texts(plan: TablePlan) -> list[str]:
    """The replica side's canonical text of each column, in the order of the source side's."""
    return [canonical_text(_TARGET.quote(c.target_name), *kind_of(c.target_type)) for c in plan.columns]


def verify_table(planner: Planner, plan: TablePlan, target: psycopg.Connection) -> Verification:
    source_rows, source_sum = source_figures(planner, plan)
    replica_sql = _TARGET.checksum_query(plan.names.schema, plan.names.table, replica_canonical_texts(plan))
    try:
        row = target.execute(replica_sql).fetchone()
    except psycopg.errors.UndefinedTable:
        target.rollback()
        row = None
    return Verification(
        table=plan.config.key,
        replica=plan.names.table_key,
        source_rows=source_rows,
        replica_rows=None if row is None else int(row[0]),
        source_checksum=source_sum,
        replica_checksum=None if row is None else str(row[1]),
    )


def verify_tables(planner: Planner, plans: list[TablePlan]) -> list[Verification]:
    with psycopg.connect(planner.settings.target.libpq_url, autocommit=True) as target:
        return [verify_table(planner, plan, target) for plan in plans]
