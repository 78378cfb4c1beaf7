"""SCD2 history fed full snapshots in any order of dates (dbt_package/macros/asof_history/tidemark_scd2_sync_sql.sql).

The arbiter is the property: whatever the order the snapshots are synced in, the
history equals the one implied by the snapshots in date order, where a version is
a maximal run of consecutive synced dates with the same data and ends at the next
synced date where the key is absent or different. A brute-force oracle computes
that history from the snapshots themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from itertools import pairwise

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Project

Row = tuple[int, str | None]  # key, value (None: a NULL value, the row still present)
Version = tuple[int, str | None, date, date | None]
Snapshots = dict[date, dict[int, str | None]]

DAY0 = date(2026, 12, 1)
SYNC_CALL = (
    "{{ tidemark.tidemark_scd2_sync_sql('scd.history', 'scd.snapshot', 'scd.synced_dates', \"'scd.items'\", "
    "['id'], ['val'], '%(as_of)s') }}"
)


class History:
    """A history table, its snapshot table and synced dates in a real Postgres, and the compiled macro."""

    def __init__(self, project: Project) -> None:
        compiled = project.dbt("compile", "--quiet", "--inline", SYNC_CALL).stdout
        self.sync_sql = compiled.strip()
        assert self.sync_sql.startswith("with bounds as"), compiled
        self.conn = psycopg.connect(project.target_url, autocommit=True)
        self.conn.execute("create schema scd")
        self.conn.execute("create table scd.snapshot (id integer primary key, val text)")
        self.conn.execute("create table scd.history (id integer, val text, valid_from date, valid_to date)")
        self.conn.execute("create table scd.synced_dates (table_key text, as_of date, primary key (table_key, as_of))")

    def reset(self) -> None:
        self.conn.execute("truncate scd.history, scd.synced_dates")

    def sync(self, as_of: date, rows: dict[int, str | None]) -> tuple[int, int, int]:
        """Versions removed, versions added, dates added."""
        with self.conn.transaction():
            self.conn.execute("truncate scd.snapshot")
            with self.conn.cursor() as cursor:
                cursor.executemany("insert into scd.snapshot values (%s, %s)", list(rows.items()))
            counts = self.conn.execute(self.sync_sql, {"as_of": as_of}).fetchone()
        assert counts is not None
        return int(counts[0]), int(counts[1]), int(counts[2])

    def versions(self) -> list[Version]:
        return [
            (int(r[0]), r[1], r[2], r[3])
            for r in self.conn.execute("select id, val, valid_from, valid_to from scd.history order by 1, 3").fetchall()
        ]


@pytest.fixture
def history(project: Project) -> Iterator[History]:
    table = History(project)
    yield table
    table.conn.close()


def oracle(snapshots: Snapshots) -> list[Version]:
    """The history the snapshots imply, by brute force over the dates in order."""
    dates = sorted(snapshots)
    keys = sorted({key for rows in snapshots.values() for key in rows})
    versions: list[Version] = []
    for key in keys:
        states = [(key in snapshots[d], snapshots[d].get(key)) for d in dates]
        start = 0
        for i in range(1, len(dates) + 1):
            if i == len(dates) or states[i] != states[start]:
                present, value = states[start]
                if present:
                    versions.append((key, value, dates[start], dates[i] if i < len(dates) else None))
                start = i
    return sorted(versions, key=lambda v: (v[0], v[2]))


def assert_canonical(versions: list[Version]) -> None:
    """No two versions of a key overlap, and adjacent versions differ."""
    for (key_a, val_a, _, to_a), (key_b, val_b, from_b, _) in pairwise(versions):
        if key_a != key_b:
            continue
        assert to_a is not None and to_a <= from_b, f"versions of key {key_a} overlap: {versions}"
        assert not (to_a == from_b and val_a == val_b), f"adjacent identical versions of key {key_a}: {versions}"


def test_the_worked_example(history: History) -> None:
    dec = {day: date(2026, 12, day) for day in (1, 3, 5, 17)}
    history.sync(dec[17], {1: "X"})
    assert history.versions() == [(1, "X", dec[17], None)]
    history.sync(dec[1], {1: "X"})  # same data, earlier: the version reaches back
    assert history.versions() == [(1, "X", dec[1], None)]
    history.sync(dec[5], {1: "X"})  # covered, same data: no change
    assert history.versions() == [(1, "X", dec[1], None)]
    history.sync(dec[3], {})  # absent on Dec 3: closed there, present again from Dec 5
    assert history.versions() == [(1, "X", dec[1], dec[3]), (1, "X", dec[5], None)]


def test_a_changed_version_in_the_middle_splits_and_reopens(history: History) -> None:
    """Case 2 of the model as first written would end the new version at the old one's end (NULL here),
    wrongly hiding the original data on Dec 9; the property reopens it from the next synced date."""
    d1, d5, d9 = (DAY0, DAY0 + timedelta(days=4), DAY0 + timedelta(days=8))
    history.sync(d1, {1: "a"})
    history.sync(d9, {1: "a"})
    history.sync(d5, {1: "b"})
    assert history.versions() == [(1, "a", d1, d5), (1, "b", d5, d9), (1, "a", d9, None)]


snapshot_rows = st.dictionaries(st.integers(0, 3), st.sampled_from(["a", "b", None]), max_size=4)


@st.composite
def synced_history(draw: st.DrawFn) -> tuple[Snapshots, list[date]]:
    days = draw(st.lists(st.integers(0, 12), min_size=1, max_size=7, unique=True))
    snapshots = {DAY0 + timedelta(days=day): draw(snapshot_rows) for day in days}
    order = draw(st.permutations(sorted(snapshots)))
    return snapshots, list(order)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=synced_history(), again=st.integers(0, 6))
def test_any_order_gives_the_history_of_date_order(
    history: History, case: tuple[Snapshots, list[date]], again: int
) -> None:
    snapshots, order = case
    expected = oracle(snapshots)

    history.reset()
    for as_of in sorted(snapshots):
        history.sync(as_of, snapshots[as_of])
    assert history.versions() == expected

    history.reset()
    for as_of in order:
        history.sync(as_of, snapshots[as_of])
    assert history.versions() == expected
    assert_canonical(history.versions())

    repeated = order[again % len(order)]
    # Syncing a date twice changes nothing, and writes nothing.
    assert history.sync(repeated, snapshots[repeated]) == (0, 0, 0)
    assert history.versions() == expected
