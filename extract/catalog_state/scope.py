"""Which configured tables a catalog read must describe afresh, and the state it leaves: labels
CREATED / UPDATED / NO CHANGE, and the ancestral merge of unchanged tables' columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from extract.config.seeds import SyncTable

TableName = tuple[str, str]

CREATED = "CREATED"
UPDATED = "UPDATED"
NO_CHANGE = "NO CHANGE"


@dataclass(frozen=True)
class Listed:
    """A table or view as the source lists it, with the time its definition last changed."""

    schema: str
    name: str
    modify_date: datetime | None  # None: the source does not stamp it (every read then reads it)


def match_scope(configs: Iterable[SyncTable], listing: Iterable[Listed]) -> dict[str, Listed]:
    """Each configured table's listing entry, by the seed's key: the one spelled exactly so, else the
    only one that matches in another case (as SQL Server compares names). A configured table the
    source does not list is left out; planning it names the problem."""
    exact = {(t.schema, t.name): t for t in listing}
    folded: dict[TableName, list[Listed]] = {}
    for table in exact.values():
        folded.setdefault((table.schema.lower(), table.name.lower()), []).append(table)
    matched: dict[str, Listed] = {}
    for config in configs:
        found = exact.get((config.source_schema, config.source_table))
        candidates = folded.get((config.source_schema.lower(), config.source_table.lower()), [])
        if found is None and len(candidates) == 1:
            found = candidates[0]
        if found is not None:
            matched[config.key] = found
    return matched


def label(listed: Listed, known: bool, since: datetime | None) -> str:
    """CREATED when the state does not hold the table, UPDATED when its definition changed at or after
    `since` (or the read is a full one: since None, or the source stamps no dates), else NO CHANGE."""
    if not known:
        return CREATED
    if since is None or listed.modify_date is None or listed.modify_date >= since:
        return UPDATED
    return NO_CHANGE


def ancestral_merge(
    fresh: Mapping[TableName, dict[str, object]],
    previous: Mapping[TableName, dict[str, object]],
    labels: Mapping[TableName, str],
) -> dict[TableName, dict[str, object]]:
    """The new state: fresh definitions for CREATED and UPDATED tables, the previous state's for NO
    CHANGE tables; a table out of scope (no label) is dropped."""
    merged: dict[TableName, dict[str, object]] = {}
    for table, state in labels.items():
        merged[table] = dict(fresh[table]) if state in (CREATED, UPDATED) else dict(previous[table])
    return merged
