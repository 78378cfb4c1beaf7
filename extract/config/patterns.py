"""Rows of sync_tables.csv that name tables by pattern (`Sales,*` or `*,*`, with `*` and `?` as in a
shell), expanded against the source's listing when a pass starts: a table created in the source that
matches is synced from the next pass on, and one dropped is no longer asked for.

A row naming a table exactly wins over every pattern; otherwise a disabled matching pattern (an
exclusion, such as `Sales,Temp*,...,false`) wins over enabled ones, and the first enabled one gives
the table its settings. Names match as SQL Server compares them: without regard to case."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase

from extract.config.seeds import SyncTable
from extract.core.sql_contract import PATTERN_WILDCARDS

_WILDCARDS = tuple(PATTERN_WILDCARDS)


def is_pattern(config: SyncTable) -> bool:
    return any(w in config.source_schema or w in config.source_table for w in _WILDCARDS)


def _matches(config: SyncTable, schema: str, table: str) -> bool:
    return fnmatchcase(schema.lower(), config.source_schema.lower()) and fnmatchcase(
        table.lower(), config.source_table.lower()
    )


def expand_patterns(configs: Sequence[SyncTable], listing: Iterable[tuple[str, str]]) -> list[SyncTable]:
    """The configured tables: the rows naming one exactly, then each listed table a pattern takes."""
    exact = [c for c in configs if not is_pattern(c)]
    patterns = [c for c in configs if is_pattern(c)]
    named = {(c.source_schema.lower(), c.source_table.lower()) for c in exact}
    found = list(exact)
    for schema, table in listing:
        if (schema.lower(), table.lower()) in named:
            continue
        matching = [p for p in patterns if _matches(p, schema, table)]
        if not matching or any(not p.enabled for p in matching):
            continue
        found.append(replace(matching[0], source_schema=schema, source_table=table))
    return found


def unmatched_patterns(configs: Sequence[SyncTable], listing: Iterable[tuple[str, str]]) -> list[str]:
    """The enabled pattern rows that match no listed table, as SCHEMA.TABLE patterns."""
    listed = list(listing)
    return [
        c.key
        for c in configs
        if is_pattern(c) and c.enabled and not any(_matches(c, schema, table) for schema, table in listed)
    ]
