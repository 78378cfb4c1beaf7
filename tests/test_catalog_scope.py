"""Labels, scope and the ancestral merge of a catalog read, without a database."""

from __future__ import annotations

from datetime import datetime

from extract.catalog_state.scope import CREATED, NO_CHANGE, UPDATED, Listed, ancestral_merge, label, match_scope
from extract.config.seeds import SyncTable

MARK = datetime(2026, 11, 24, 12, 0)


def test_labels_follow_the_state_and_the_stamp() -> None:
    old, new = Listed("dbo", "A", datetime(2026, 11, 24, 11)), Listed("dbo", "A", datetime(2026, 11, 24, 12))
    assert label(old, known=False, since=MARK) == CREATED
    assert label(old, known=True, since=MARK) == NO_CHANGE
    assert label(new, known=True, since=MARK) == UPDATED  # stamped at the bound itself: read again
    assert label(old, known=True, since=None) == UPDATED  # a full read
    assert label(Listed("dbo", "A", None), known=True, since=MARK) == UPDATED  # the source stamps nothing


def test_scope_matches_exactly_first_then_in_another_case() -> None:
    listing = [Listed("dbo", "Users", None), Listed("dbo", "users", None), Listed("Sales", "Order", None)]
    configs = [SyncTable("dbo", "users"), SyncTable("sales", "order"), SyncTable("dbo", "Gone")]
    matched = match_scope(configs, listing)
    assert matched == {"dbo.users": listing[1], "sales.order": listing[2]}


def test_unchanged_tables_carry_their_columns_and_tables_out_of_scope_are_dropped() -> None:
    previous = {("dbo", "A"): {"v": 1}, ("dbo", "B"): {"v": 1}, ("dbo", "Gone"): {"v": 1}}
    fresh = {("dbo", "B"): {"v": 2}, ("dbo", "New"): {"v": 1}}
    labels = {("dbo", "A"): NO_CHANGE, ("dbo", "B"): UPDATED, ("dbo", "New"): CREATED}
    assert ancestral_merge(fresh, previous, labels) == {
        ("dbo", "A"): {"v": 1},
        ("dbo", "B"): {"v": 2},
        ("dbo", "New"): {"v": 1},
    }
