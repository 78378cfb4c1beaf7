"""The collector paused while dbt's parse is built, and its objects frozen out of later collections."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from extract.runtime.heap import long_lived_objects, release_frozen


@pytest.fixture(autouse=True)
def _collector_as_it_was(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr("extract.runtime.heap._frozen_before_ours", 0)
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_objects_built_in_the_block_are_frozen_and_the_collector_is_back_on() -> None:
    gc.enable()
    gc.unfreeze()
    with long_lived_objects():
        assert not gc.isenabled()
        kept = [[n] for n in range(10_000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with long_lived_objects():
        pass
    assert not gc.isenabled()


def test_a_failing_block_still_gives_the_collector_back() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), long_lived_objects():
        raise RuntimeError("parse failed")
    assert gc.isenabled()


def test_released_objects_are_collected_again() -> None:
    with long_lived_objects():
        cycle: list[object] = []
        cycle.append(cycle)
    assert gc.get_freeze_count() > 0
    release_frozen()
    assert gc.get_freeze_count() == 0


def test_a_block_that_made_much_garbage_is_collected_before_it_is_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("extract.runtime.heap.COLLECT_ABOVE", 1_000)
    gc.unfreeze()
    gc.collect()
    with long_lived_objects():
        for _ in range(5_000):
            cycle: list[object] = []
            cycle.append(cycle)
    frozen_garbage = gc.get_freeze_count()
    gc.unfreeze()
    assert gc.collect() < 1_000, f"{frozen_garbage} objects frozen, most of them unreachable cycles"


def test_objects_frozen_by_the_process_that_forked_this_one_stay_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("extract.runtime.heap._frozen_before_ours", None)
    gc.unfreeze()
    parents = [[n] for n in range(1_000)]
    gc.freeze()  # as a fork server does before it forks
    with long_lived_objects():
        pass
    release_frozen()
    # A frozen object whose last reference goes leaves the count (another test's thread may drop one):
    # what the parent froze must stay out of the collected generations, as gc.get_objects() shows.
    assert gc.get_freeze_count() >= len(parents)
    collected = {id(item) for item in gc.get_objects()}
    assert id(parents) not in collected and id(parents[-1]) not in collected


def test_nothing_is_thawed_before_tidemark_froze_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("extract.runtime.heap._frozen_before_ours", None)
    gc.unfreeze()
    parents = [[n] for n in range(1_000)]
    gc.freeze()  # a fork server's, and no parse of tidemark's frozen yet
    release_frozen()
    assert gc.get_freeze_count() >= len(parents)
