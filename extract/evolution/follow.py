"""A table run's first steps: compare the replica with the table as planned, follow the source's
schema as the table's policy says, and make sure the tables a run lands in exist, before anything lands."""

from __future__ import annotations

import psycopg

from extract.core.observer import Note, Observer
from extract.evolution.apply import evolve, refuse_unless_allowed
from extract.evolution.drift import drift
from extract.landing.changed_keys import ensure_changed_keys
from extract.landing.staging import ensure_snapshot_table, ensure_tables, relax_not_null
from extract.landing.unique_constraints import ensure_unique
from extract.planning.table_plan import TablePlan


def follow_schema(conn: psycopg.Connection, plan: TablePlan, refresh: bool, observer: Observer) -> list[str]:
    """The changes made to the replica, as a person reads them; with `refresh` none (the full refresh
    replaces the replica as the source defines it now), only said."""
    found = drift(conn, plan)
    conn.commit()
    if not found:
        return []
    if refresh:
        return [f"{line}: the full refresh replaces the replica" for line in found.lines()]
    refuse_unless_allowed(plan, found)
    said = [change.describe() for change in evolve(conn, plan, found)]
    for text in said:
        observer(Note(plan.config.key, f"schema: {text}"))
    return said


def prepare_tables(conn: psycopg.Connection, plan: TablePlan, refresh: bool, observer: Observer) -> list[str]:
    """Before a run lands: the replica follows the source's schema (`follow_schema`, whose changes it
    returns); staging and the replica exist, and the as-of snapshots' table (so that its history
    model builds before any snapshot lands); NOT NULL is relaxed where the source relaxed it; the
    replica carries its unique constraints (a full refresh's new replica gets them on the next run)."""
    said = follow_schema(conn, plan, refresh, observer)
    names = plan.names
    ensure_tables(conn, names, plan.columns, plan.table.primary_key)
    ensure_changed_keys(conn, plan.state, names, plan.columns, plan.table.primary_key)
    if plan.config.asof_history:
        ensure_snapshot_table(conn, names, plan.columns)
    relax_not_null(conn, names, plan.columns, plan.table.primary_key)
    for label, columns in [] if refresh else plan.unique_constraints:
        ensure_unique(conn, names, columns, label)
    return said
