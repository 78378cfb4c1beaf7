"""The seed's record_id and unique_keys hold at the source before a sync lands anything: a replica
cannot carry a unique constraint that the source's rows break."""

from __future__ import annotations

import psycopg

from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError
from extract.landing.unique_constraints import has_unique
from extract.planning.table_plan import TablePlan
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection


def repeated_value_query(dialect: Dialect, table_ref: str, columns: list[str]) -> str:
    """A value of `columns` that more than one row holds (NULLs repeat freely, as in a unique constraint)."""
    listed = ", ".join(dialect.quote(c) for c in columns)
    present = " and ".join(f"{dialect.quote(c)} is not null" for c in columns)
    return f"select {listed} from {table_ref} where {present} group by {listed} having count(*) > 1"


def check_unique_at_source(
    source: JdbcConnection, dialect: Dialect, target: DatabaseUrl, plan: TablePlan, table_ref: str
) -> None:
    """Refuse (exit 2) a record_id or unique_keys whose values repeat at the source. Only settings the
    replica does not carry yet are checked: once it does, every merge keeps them, and a pass does not
    scan the source again."""
    wanted = plan.unique_settings
    if not wanted:
        return
    with psycopg.connect(target.libpq_url, autocommit=True) as conn:
        unchecked = [
            (label, columns) for label, columns, replica in wanted if not has_unique(conn, plan.names, replica)
        ]
    for label, columns in unchecked:
        rows = source.query(repeated_value_query(dialect, table_ref, columns), max_rows=1)
        if rows:
            value = rows[0][0] if len(columns) == 1 else rows[0]
            raise TidemarkError(
                f"{plan.config.key}: {label} is not unique in the source ({value!r} is held by more than one row): "
                "fix the seed, or the source's rows, before syncing"
            )
