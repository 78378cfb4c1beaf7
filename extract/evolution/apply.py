"""Make a replica (and its staging) follow its source's schema, as the table's on_schema_change says:

- evolve: columns added, dropped, widened in place, or replaced when changed otherwise;
- append_new_columns: the same, except that a dropped column stays in the replica with its values;
- fail: any change refuses the table's run, and nothing is written.

A column whose values the replica cannot take from the change alone (one added, one replaced, one
whose values the source may have converted otherwise) is backfilled: the table's next run reads
every row (a full run), recorded in the state schema's `schema_changes` in the same transaction as the DDL,
so that a run killed in between still reads everything.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from extract.config.seeds import POLICIES
from extract.core.errors import BatchRefused
from extract.core.sql_contract import HISTORY_SUFFIX, KEY_HASH_COLUMN, ROW_HASH_COLUMN
from extract.core.state_schema import StateSchema
from extract.evolution.drift import Drift
from extract.landing.changed_keys import mark_rescan
from extract.landing.replica_locks import with_lock_timeout
from extract.planning.table_plan import TablePlan
from extract.state.run_log import DDL_LOCK, merge_lock_sql

EVOLVE, APPEND_NEW_COLUMNS, FAIL = POLICIES

_RECORD = """
insert into {schema_changes}
    (table_key, change, column_name, old_definition, new_definition, on_schema_change, backfill_after_run)
select %(table)s, %(change)s, %(column)s, %(old)s, %(new)s, %(policy)s,
    case when %(backfill)s then (
        select coalesce(max(run_id), 0) from {run_log} where table_key = %(table)s
    ) end
returning change_id
"""

#: Changes whose backfill no full run merged since.
_BACKFILL_DUE = """
select string_agg(due.backfilled, ', ' order by due.change_id) from {backfills_due} as due where due.table_key = %s
"""


class SchemaChangeRefused(BatchRefused):
    """The source's schema changed in a way the table's policy (or the replica) does not take: its
    run fails before anything is written, and the other tables go on."""


@dataclass(frozen=True)
class Applied:
    change: str  # column_added, column_dropped, column_kept, column_widened, column_replaced
    column: str
    old_definition: str | None
    new_definition: str | None
    backfill: bool

    def recorded(self, policy: str) -> dict[str, object]:
        """Its parameters of _RECORD, but the table's key."""
        return {
            "change": self.change,
            "column": self.column,
            "old": self.old_definition,
            "new": self.new_definition,
            "policy": policy,
            "backfill": self.backfill,
        }

    def describe(self) -> str:
        verb = self.change.removeprefix("column_")
        detail = " -> ".join(d for d in (self.old_definition, self.new_definition) if d)
        suffix = "; every row read again" if self.backfill else ""
        return f"column {self.column} {verb} ({detail}){suffix}"


def backfill_due(conn: psycopg.Connection, state: StateSchema, table_key: str) -> str | None:
    """The columns a full run must still fill (an evolution's backfill), or None."""
    row = conn.execute(state.sql(_BACKFILL_DUE), (table_key,)).fetchone()
    conn.commit()
    return None if row is None or row[0] is None else str(row[0])


def refuse_unless_allowed(plan: TablePlan, drift: Drift) -> None:
    """The changes no policy applies in place, and `fail`'s refusal of any change."""
    table = plan.config.key
    if plan.config.on_schema_change == FAIL:
        raise SchemaChangeRefused(
            f"{table}: the source's schema changed and on_schema_change is fail: {'; '.join(drift.lines())}. "
            "Nothing was written; set on_schema_change to evolve or append_new_columns in seeds/sync_tables.csv "
            "to follow it"
        )
    if drift.key is not None:
        old, new = drift.key
        raise SchemaChangeRefused(
            f"{table}: the source's primary key changed from ({', '.join(old)}) to ({', '.join(new)}); "
            "the replica cannot follow it in place. Nothing was written; sync it with --full-refresh to land every "
            "row again and replace the replica (its history is kept)"
        )
    keys = set(plan.key_columns)
    for retyped in drift.retyped:
        if retyped.column.target_name in keys and not retyped.how.in_place:
            raise SchemaChangeRefused(
                f"{table}: key column {retyped.column.target_name} changed type ({retyped.old_type} -> "
                f"{retyped.new_type}), which the replica cannot take in place. Nothing was written; sync it with "
                "--full-refresh to land every row again and replace the replica (its history is kept)"
            )


def _alter(table: sql.Identifier, action: str, column: str, type_text: str = "") -> sql.Composed:
    """`alter table if exists <table> <action>`, the action's `{}` the quoted column, then `type_text`."""
    # Types come from seeds/type_map.csv, checked by the target's parser when the type map was read.
    return sql.SQL("alter table if exists {} " + action.replace("{}", "{column}") + type_text).format(
        table, column=sql.Identifier(column)
    )


def _planned(drift: Drift, policy: str) -> list[Applied]:
    applied = [Applied("column_added", c.target_name, None, c.target_type, True) for c in drift.added]
    kept = policy == APPEND_NEW_COLUMNS
    for name, type_text in drift.dropped:
        applied.append(Applied("column_kept" if kept else "column_dropped", name, type_text, None, False))
    for r in drift.retyped:
        change = "column_widened" if r.how.in_place else "column_replaced"
        applied.append(Applied(change, r.column.target_name, r.old_type, r.new_type, not r.how.exact))
    return applied


def _statements(
    change: Applied,
    type_text: str,
    replica: sql.Identifier,
    landing: tuple[sql.Identifier, ...],
    snapshots: sql.Identifier,
) -> list[sql.Composed]:
    """The DDL of one change, on the replica, the `landing` tables (staging, and a first sync's own
    table, whose rows may wait there for their merge) and the as-of snapshots' landing table."""
    name = change.column
    done: list[sql.Composed] = []
    if change.change in ("column_dropped", "column_replaced"):
        done.append(_alter(replica, "drop column {}", name))
        done += [_alter(t, "drop column if exists {}", name) for t in landing]
    if change.change == "column_replaced":
        done.append(_alter(snapshots, "drop column if exists {}", name))
    if change.change == "column_kept":
        done.append(_alter(replica, "alter column {} drop not null", name))
        done += [_alter(t, "drop column if exists {}", name) for t in landing]
    if change.change in ("column_added", "column_replaced"):
        done += [_alter(t, "add column if not exists {} ", name, type_text) for t in (replica, *landing, snapshots)]
    if change.change == "column_widened":
        done += [_alter(t, "alter column {} type ", name, type_text) for t in (replica, *landing, snapshots)]
    return done


def evolve(conn: psycopg.Connection, plan: TablePlan, drift: Drift) -> list[Applied]:
    """Alter the replica and its staging as the policy says (after `refuse_unless_allowed`), and record
    what was done; one transaction, under the table's merge lock."""
    names = plan.names
    replica = sql.Identifier(names.schema, names.table)
    staging = sql.Identifier(names.schema, names.staging_table)
    landing = (staging, sql.Identifier(names.schema, names.first_sync_table))
    snapshots = sql.Identifier(names.schema, names.snapshot_table)
    history = sql.Identifier(names.schema, names.table + HISTORY_SUFFIX)
    changed_keys = sql.Identifier(names.schema, names.changed_keys_table)
    types = {c.target_name: c.target_type for c in plan.columns}
    applied = _planned(drift, plan.config.on_schema_change)
    statements: list[sql.Composed] = [
        # The hash columns earlier versions kept for reconcile: every merge paid for them.
        sql.SQL("alter table {} drop column if exists {}, drop column if exists {}").format(
            replica, sql.Identifier(KEY_HASH_COLUMN), sql.Identifier(ROW_HASH_COLUMN)
        )
    ]

    def alter() -> None:
        done = list(statements)
        for change in applied:
            recorded = {"table": names.table_key, **change.recorded(plan.config.on_schema_change)}
            row = conn.execute(plan.state.sql(_RECORD), recorded).fetchone()
            assert row is not None
            done += _statements(change, types.get(change.column, ""), replica, landing, snapshots)
            if change.change == "column_replaced":
                # dbt's snapshot keeps a column's type: the history's old values move aside, the new
                # column is added by the snapshot itself.
                moved = sql.Identifier(f"{change.column}__before_change_{row[0]}")
                rename = sql.SQL("alter table if exists {} rename column {} to {}")
                done.append(rename.format(history, sql.Identifier(change.column), moved))
            if change.change == "column_widened":
                done.append(_alter(history, "alter column {} type ", change.column, types[change.column]))
                if change.column in plan.key_columns:
                    done.append(_alter(changed_keys, "alter column {} type ", change.column, types[change.column]))
        for statement in done:
            conn.execute(statement)
        mark_rescan(conn, plan.state, names, "schema change")

    def take_locks() -> None:
        conn.execute(DDL_LOCK)
        conn.execute(*merge_lock_sql(plan.state, names.table_key))

    relations = [sql.Composed([t]).as_string(conn) for t in (replica, *landing, snapshots, history)]
    with_lock_timeout(conn, relations, alter, first=take_locks)
    return applied
