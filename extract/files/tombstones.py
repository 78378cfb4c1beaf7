"""The rows a file source's run deletes, as tombstones the merge applies (and logs) like a reconcile's: the
rows of the files that went (on_file_removed=delete), and, without a key, the rows of a changed file past
its new end (its rows are keyed by their place in it, so the rest are replaced in place)."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.core.quoting import ParameterSafeIdentifier
from extract.core.sql_contract import FILE_COLUMN, FILE_ROW_COLUMN, RUN_ID_COLUMN
from extract.core.state_schema import StateSchema
from extract.planning.table_plan import TablePlan

#: Per file of the run, the rows it ends at now (none for a file gone) and the most any version of it had,
#: merged or waiting in staging.
_ENDS = """
with files as (
    select logged.path, logged.action from {file_log} as logged
    where logged.table_key = %(table_key)s and logged.run_id = %(run_id)s and logged.action in ('land', 'remove')
),
ends as (
    select
        files.path,
        case when files.action = 'remove' then 0 else coalesce((
            select max(staged.{row}) from {staging} as staged
            where staged.{file} = files.path and staged.{run} = %(run_id)s
        ), 0) end as now_ends,
        greatest(
            (select max(kept.{row}) from {replica} as kept where kept.{file} = files.path),
            (select max(staged.{row}) from {staging} as staged where staged.{file} = files.path)
        ) as ended
    from files
)
insert into {tombstones} ({file}, {row}, {run})
select ends.path, place, %(run_id)s from ends cross join lateral generate_series(ends.now_ends + 1, ends.ended) as place
"""

#: With a key: the keys whose rows came from a file that went, in the replica or waiting in staging.
_GONE_KEYS = """
insert into {tombstones} ({keys}, {run})
select {keys}, %(run_id)s from {replica} where {file} = any(%(paths)s)
union
select {keys}, %(run_id)s from {staging} where {file} = any(%(paths)s)
"""


def file_tombstones(
    conn: psycopg.Connection, plan: TablePlan, state: StateSchema, run_id: int, key: tuple[str, ...]
) -> None:
    """Land the run's tombstones (again, for a resumed run: its earlier ones are replaced)."""
    names = plan.names
    relations = {
        "replica": sql.Identifier(names.schema, names.table),
        "staging": sql.Identifier(names.schema, names.staging_table),
        "tombstones": sql.Identifier(names.schema, names.tombstone_table),
        "file": sql.Identifier(FILE_COLUMN),
        "row": sql.Identifier(FILE_ROW_COLUMN),
        "run": sql.Identifier(RUN_ID_COLUMN),
    }
    with conn.transaction():
        conn.execute(sql.SQL("delete from {tombstones} where {run} = %s").format(**relations), (run_id,))
        parameters = {"table_key": names.table_key, "run_id": run_id}
        if not key:
            conn.execute(state.sql(_ENDS, **relations), parameters)
            return
        removed = conn.execute(
            state.sql("select path from {file_log} where table_key = %s and run_id = %s and action = 'remove'"),
            (names.table_key, run_id),
        ).fetchall()
        if removed:
            keys = sql.SQL(", ").join(ParameterSafeIdentifier(k) for k in plan.key_columns)
            parameters["paths"] = [row[0] for row in removed]
            conn.execute(state.sql(_GONE_KEYS, keys=keys, **relations), parameters)
