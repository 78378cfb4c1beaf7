"""The check that stands in for a run when a table has nothing to read.

A pass asks the source, for many tables in one query, whether any row matches what each table's next run
would read: the changed-rows filter from the committed watermark (the safety window, and rows with a
NULL cursor, included). A table that matches none lands no run, needs no merge, and its state stays as
it was: its next run still reads from the same watermark, so a row that commits later is read then. A
table under a clock cursor whose rows to read are all stamped before the watermark (the safety window's,
the NULL cursor's) is compared with its replica (extract/readers/merged_already.py): when the replica
holds each of them as it is, a run would merge nothing, and the table is found unchanged too.
The check is recorded (the source's clock, modify id, Change Tracking version or CDC LSN read before it),
so the replica's freshness counts from it.

Only a table whose latest run was of the plan it has now is checked; one whose definition changed in
the source (the pass's catalog read says so), whose seed settings or type map changed, with runs
waiting, running or a backfill due, or without a cursor (and not read by Change Tracking or CDC), or whose
recorded changes expired, runs as always.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import psycopg

from extract.core.errors import LogicalError, SourceError, TidemarkError
from extract.core.observer import silent
from extract.lifecycle.context import RunContext
from extract.planning.table_plan import TablePlan
from extract.readers.by_plan import recorded_reader
from extract.readers.merged_already import Compared, merged_already, standing, still_merged
from extract.readers.read_start import read_segments
from extract.readers.recorded_changes import RecordedChangesReader
from extract.source.catalog import SourceColumn
from extract.source.dialects import Dialect
from extract.source.watermarks import check_monotonic, parse_watermark, read_watermark, usable_watermark
from extract.state.unchanged import Committed, checkable, record_checks

#: Tables asked about in one query.
TABLES_PER_QUERY = 100


@dataclass(frozen=True)
class Unchanged:
    """A table the pass found with nothing to read: what the pass reports for it."""

    table: str
    target: str
    #: The committed watermark, where its next run still reads from.
    watermark: str
    #: The source's clock (or modify id) read before the check.
    checked_through: str


@dataclass(frozen=True)
class Probe:
    plan: TablePlan
    watermark: str
    #: Whether the next run would read a row, one EXISTS per segment of its read (the changed rows since
    #: the watermark, the rows with a NULL cursor): asked one by one, each can use the cursor's index, where
    #: their disjunction scanned the table until a row matched (0.75 s in 10,000,000 rows). Under Change
    #: Tracking or CDC, one: whether a key changed since the position.
    tests: tuple[str, ...]
    #: Under a clock cursor, whether a row is stamped at or after the watermark: a change the last run may
    #: not have read. Without one, the rows `tests` finds were read before, and are compared with the
    #: replica's. "": any row found runs the table.
    newer: str = ""
    #: The conditions of the next run's read, which the comparison reads by.
    conditions: tuple[str, ...] = ()
    #: What the table's check starts from: its last comparison, and the replica's latest merge.
    committed: Committed | None = None
    #: What this check compared, when it found those rows in the replica as they are.
    compared: Compared | None = None


def find_unchanged(
    context: RunContext,
    plans: Sequence[TablePlan],
    each: Callable[..., Iterable[list[Probe]]] = map,
    on_rows: Callable[[], None] | None = None,
) -> tuple[list[Unchanged], set[str]]:
    """Those of `plans` with nothing to read now (their checks are recorded), and the tables (configured
    keys) a check found rows to read in. `each` maps the queries over the probes (a thread pool's `map`
    asks them at once, each thread on its own connection).
    `on_rows` is called, from the thread that asked, as soon as a query finds a table with rows to read
    (what waits for a pass's landing can start then), or when one cannot be checked."""
    settings = context.settings
    with_cursor = {p.names.table_key: p for p in plans if p.cursor is not None or p.changes is not None}
    if not with_cursor:
        return [], set()
    with psycopg.connect(settings.target.libpq_url) as conn:
        committed = checkable(conn, settings.state_schema, {k: p.fingerprint for k, p in with_cursor.items()})
        if not committed:
            return [], set()
        started = datetime.now(UTC)
        # Read before the checks, as a run reads them before its data query.
        readings = _readings(context, [with_cursor[key] for key in committed])
        probes = _probes(context, [with_cursor[key] for key in committed], committed, readings)
        empty = _without_rows(context, probes, each, on_rows)
        found = [
            Unchanged(p.plan.config.key, p.plan.names.table_key, p.watermark, readings[_kind(context, p.plan)])
            for p in empty
        ]
        compared = {p.plan.names.table_key: p.compared.as_json() for p in empty if p.compared is not None}
        record_checks(conn, settings.state_schema, {u.target: u.checked_through for u in found}, started, compared)
    return found, {p.plan.config.key for p in probes} - {u.table for u in found}


def _probes(
    context: RunContext, plans: list[TablePlan], committed: dict[str, Committed], readings: dict[str, str]
) -> list[Probe]:
    probes = []
    for plan in plans:
        state = committed[plan.names.table_key]
        position, reading = state.cursor_value, readings[_kind(context, plan)]
        recorded = recorded_reader(plan)
        if recorded is not None:
            test = _recorded_test(recorded(context, plan, silent), position, reading)
            if test is not None:
                probes.append(Probe(plan, position, (test,)))
            continue
        watermark = usable_watermark(context.dialect, plan.cursor, position)
        conditions = tuple(s.base for s in read_segments(context, plan, watermark) if s.base) if watermark else ()
        if watermark and conditions and _after(plan, watermark, reading):
            table_ref = context.table_ref(plan.table)
            tests = tuple(f"exists (select 1 from {table_ref} where {condition})" for condition in conditions)
            newer = newer_rows_test(context.dialect, table_ref, plan.cursor, watermark)
            probes.append(Probe(plan, watermark, tests, newer, conditions, state))
    return probes


def newer_rows_test(dialect: Dialect, table_ref: str, cursor: SourceColumn | None, watermark: str) -> str:
    """The test for a row stamped at or after a clock watermark ("" under a modify id: its read starts at
    the watermark, with no window read again)."""
    if cursor is None or dialect.is_modify_id(cursor):
        return ""
    since = f"{dialect.quote(cursor.name)} >= {dialect.cursor_literal(parse_watermark(watermark), cursor)}"
    return f"exists (select 1 from {table_ref} where {since})"


def _recorded_test(reader: RecordedChangesReader, position: str, reading: str) -> str | None:
    """The check of a table read by the changes its source records, unless its run must run: the state is
    another reader's, its changes expired (the run brings it back), or the source went back."""
    try:
        since, now = reader.parse(position), reader.parse(reading)
    except TidemarkError:
        return None
    oldest = reader.oldest_valid(since, fresh=False)
    if oldest is None or since < oldest or now < since:
        return None
    return reader.any_change(since, now)


def _kind(context: RunContext, plan: TablePlan) -> str:
    """What the table's position is read as: a clock reading, a modify id, or its recorded changes'."""
    if plan.changes is not None:
        return plan.changes.reader
    return "modify id" if plan.cursor is not None and context.dialect.is_modify_id(plan.cursor) else "clock"


def _readings(context: RunContext, plans: list[TablePlan]) -> dict[str, str]:
    """The source's clock, its lowest active modify id, its Change Tracking version and its highest CDC
    LSN, those the plans need, as a run reads them before its data query."""
    readings = {}
    for plan in plans:
        kind = _kind(context, plan)
        if kind not in readings:
            recorded = recorded_reader(plan)
            readings[kind] = (
                read_watermark(context.source, context.dialect, plan.cursor)
                if recorded is None
                else recorded.text(recorded.current(context, plan))
            )
    return readings


def _after(plan: TablePlan, watermark: str, reading: str) -> bool:
    """A reading before the committed watermark is no check: the table's run says what went wrong."""
    try:
        check_monotonic(plan.config.key, watermark, reading)
    except LogicalError:
        return False
    return True


def _without_rows(
    context: RunContext,
    probes: list[Probe],
    each: Callable[..., Iterable[list[Probe]]],
    on_rows: Callable[[], None] | None,
) -> list[Probe]:
    """The probes whose tables hold no row their next run would read."""

    def empty_in(chunk: list[Probe]) -> list[Probe]:
        empty = _empty_in(context, chunk)
        if on_rows is not None and len(empty) < len(chunk):
            on_rows()
        return empty

    chunks = [probes[start : start + TABLES_PER_QUERY] for start in range(0, len(probes), TABLES_PER_QUERY)]
    return [probe for empty in each(empty_in, chunks) for probe in empty]


#: What a probe found: nothing to read, only rows read before (to compare with the replica), or a change.
_NOTHING, _READ_BEFORE, _CHANGED = "0", "1", "2"


def _empty_in(context: RunContext, chunk: list[Probe]) -> list[Probe]:
    """One query for the probes of `chunk`, then the comparisons it asks for: the probes whose tables hold
    no row to read, or none their replica does not hold as it is."""
    try:
        rows = context.source.query(probe_query(chunk))
    except SourceError:
        return []  # each table's run says what failed
    found = {int(str(number)): str(state) for number, state in rows}
    empty = [p for number, p in enumerate(chunk) if found.get(number, _NOTHING) == _NOTHING]
    to_compare = []
    for probe in (p for number, p in enumerate(chunk) if found.get(number) == _READ_BEFORE):
        before = standing(probe.committed)
        if before is not None and still_merged(context, probe.plan, probe.conditions, before):
            empty.append(replace(probe, compared=before))
        else:
            to_compare.append(probe)
    if to_compare:
        with psycopg.connect(context.settings.target.libpq_url) as conn:
            for probe in to_compare:
                last_merge = None if probe.committed is None else probe.committed.last_merge
                compared = merged_already(context, conn, probe.plan, probe.conditions, last_merge)
                if compared is not None:
                    empty.append(replace(probe, compared=compared))
    return empty


def probe_query(chunk: Sequence[Probe]) -> str:
    """Rows: each probe's number and what it found."""
    return " union all ".join(f"select {number} as probe, {_found(p)} as found" for number, p in enumerate(chunk))


def _found(probe: Probe) -> str:
    rows = " or ".join(probe.tests)
    if not probe.newer:
        return f"case when {rows} then {_CHANGED} else {_NOTHING} end"
    return f"case when {probe.newer} then {_CHANGED} when {rows} then {_READ_BEFORE} else {_NOTHING} end"
