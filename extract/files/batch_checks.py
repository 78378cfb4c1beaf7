"""A keyed file source's batch, checked before it ends 'landed': a file with a row whose key is empty fails
alone (its rows leave staging), and a key several files of the run hold keeps the row of the newest file
(by time, then path; within a file, its last row), as the files would have been merged one after another."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.core.quoting import ParameterSafeIdentifier
from extract.core.sql_contract import FILE_COLUMN, RUN_ID_COLUMN
from extract.core.state_schema import StateSchema
from extract.files.checkpoint import mark_failed
from extract.landing.staging import duplicate_key_sample
from extract.planning.table_plan import TablePlan

_WITHOUT_KEY = """
select {file}, count(*) from {staging}
where {run} = %(run_id)s and ({null_key})
group by {file}
"""

_OLDER_ROWS = """
delete from {staging} as s
using (
    select ranked.at from (
        select
            staged.ctid as at,
            row_number() over (
                partition by {keys} order by logged.modified_ms desc, logged.path desc, staged.ctid desc
            ) as newest
        from {staging} as staged
        inner join {file_log} as logged
            on logged.table_key = %(table_key)s and logged.run_id = %(run_id)s and logged.path = staged.{file}
        where staged.{run} = %(run_id)s
    ) as ranked
    where ranked.newest > 1
) as older
where s.ctid = older.at
"""


def files_without_key(conn: psycopg.Connection, plan: TablePlan, state: StateSchema, run_id: int) -> dict[str, str]:
    """The files of the run with a row whose key is empty, and why; their rows leave staging."""
    names = plan.names
    keys = [ParameterSafeIdentifier(k) for k in plan.key_columns]
    parts = {
        "staging": ParameterSafeIdentifier(names.schema, names.staging_table),
        "file": ParameterSafeIdentifier(FILE_COLUMN),
        "run": ParameterSafeIdentifier(RUN_ID_COLUMN),
        "null_key": sql.SQL(" or ").join(sql.SQL("{} is null").format(k) for k in keys),
    }
    rows = conn.execute(sql.SQL(_WITHOUT_KEY).format(**parts), {"run_id": run_id}).fetchall()
    failed = {
        str(path): f"{count} row(s) without their key ({', '.join(plan.table.primary_key)} empty)"
        for path, count in rows
    }
    for path, why in failed.items():  # with the delete, so that a resumed run cannot take the file as landed
        mark_failed(conn, state, names.table_key, run_id, path, why)
    if failed:
        conn.execute(
            sql.SQL("delete from {staging} where {run} = %s and {file} = any(%s)").format(**parts),
            (run_id, list(failed)),
        )
    conn.commit()
    return failed


def keep_newest_rows(conn: psycopg.Connection, plan: TablePlan, state: StateSchema, run_id: int) -> int:
    """Leave one row per key in the run's batch, the newest file's; returns how many rows left staging."""
    names = plan.names
    if duplicate_key_sample(conn, (names.schema, names.staging_table), plan.key_columns, run_id) is None:
        return 0  # the usual batch: ranking its rows would cost a sort of them all
    keys = sql.SQL(", ").join(sql.SQL("staged.{}").format(ParameterSafeIdentifier(k)) for k in plan.key_columns)
    statement = state.sql(
        _OLDER_ROWS,
        staging=ParameterSafeIdentifier(names.schema, names.staging_table),
        file=ParameterSafeIdentifier(FILE_COLUMN),
        run=ParameterSafeIdentifier(RUN_ID_COLUMN),
        keys=keys,
    )
    removed = conn.execute(statement, {"table_key": names.table_key, "run_id": run_id}).rowcount
    conn.commit()
    return max(removed, 0)
