"""Differences spread through a table: a reconcile samples a few windows of its first level and, where
they differ densely, compares every range one level deeper from the start, slice by slice of the key;
where they do not, it bisects from the first level as before. Either way the replica ends exact."""

from __future__ import annotations

import pytest

from extract.reconcile import compare, density
from extract.reconcile.tree import Bisection, HashSpace, Level
from tests.conftest import Project
from tests.items_table import create_items
from tests.reconcile_notes import changes, reconcile_items
from tests.replica_check import assert_replicas_equal

ROWS = 10_000


@pytest.fixture
def synced(project: Project) -> Project:
    # 625 first-level ranges of 16 keys; the windows sample 16 of them.
    project.env.update({"TIDEMARK_RECONCILE_FACTOR": "4", "TIDEMARK_RECONCILE_LEAF_ROWS": "8"})
    create_items(project, ROWS)
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()
    project.sync_replicas()
    return project


def _plant(project: Project, stride: int) -> tuple[int, int, int]:
    """Every `stride`-th key deleted, the one after it changed, and as many late rows added past the top;
    none of them seen by the cursor."""
    with project.source() as conn:
        deleted = conn.execute('delete from dbo."Items" where "Id" %% %s = 0', (stride,)).rowcount
        backdate = """update dbo."Items" set "Val" = 'backdated' where "Id" %% %s = 1"""
        updated = conn.execute(backdate, (stride,)).rowcount
        inserted = conn.execute(
            """insert into dbo."Items" select i, 'late', timestamp '2026-01-01'
            from generate_series(%s::integer, %s::integer) as i""",
            (ROWS + 1, ROWS + deleted),
        ).rowcount
    return inserted, updated, deleted


def _sampled(notes: list[str]) -> list[str]:
    return [n for n in notes if "ranges sampled differ" in n]


def test_dense_differences_are_compared_one_level_deeper_slice_by_slice(
    synced: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compare, "PART_RANGES", 256)  # slices of 64 first-level ranges; 657 hold keys
    planted = _plant(synced, 20)
    repaired, notes = reconcile_items(synced)
    assert changes(repaired) == planted
    assert _sampled(notes) == ["16 of 16 ranges sampled differ: compared from depth 6 on, in 11 slices of the key"]
    assert repaired.levels == 1
    assert_replicas_equal(synced)
    again, notes = reconcile_items(synced)
    assert (again.status, _sampled(notes)) == ("exact", [])


def test_sparse_differences_are_bisected_from_the_first_level(synced: Project) -> None:
    planted = _plant(synced, 1_000)
    repaired, notes = reconcile_items(synced)
    assert changes(repaired) == planted
    assert _sampled(notes) == []
    assert repaired.levels == 2
    assert_replicas_equal(synced)


def test_the_slices_cover_every_range_once_up_to_the_end_of_the_space() -> None:
    space = HashSpace.of(4, 14)
    parts = density.dense_parts(space, 5, 9_999, 256)
    parents = [p for part in parts for p in part.parents or []]
    assert parents == list(range(4**5))
    assert {part.depth for part in parts} == {6} and all(part.whole for part in parts)
    assert [len(part.parents or []) for part in parts[:-1]] == [64] * (len(parts) - 1)


def test_a_small_first_level_is_not_sampled() -> None:
    space = HashSpace.of(4, 14)
    assert len(density.sample_levels(space, 5, 9_999)) == density.WINDOWS
    assert density.sample_levels(space, 5, 4_000) == []  # 251 ranges: the windows would be 6% of them


def test_keys_placed_by_hash_are_not_sampled() -> None:
    # Nothing but the bisection's space is asked before the first level is chosen.
    comparer = compare.Comparer(None, None, Bisection(HashSpace.of(4, 14), 8), None, "dbo.Items", None, None)
    assert comparer._first_parts(None, 5) == [Level(5, None)]  # keys placed by hash
    comparer.last_place = 4_000
    assert comparer._first_parts(None, 5) == [Level(5, None)]  # a small first level
