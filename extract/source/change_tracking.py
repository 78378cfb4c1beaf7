"""What a Change Tracking read asks the source: the current version, each table's minimum valid version,
the changed rows as they are now, and the changed keys the table no longer holds.

A version is kept in the state as 'ct:' and 20 digits, so that versions sort as text as they do as
numbers (the state's views take the greatest) and no other reader's state can pass for one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection
from extract.source.watermarks import CHANGE_TRACKING_PREFIX

_VERSION = re.compile(r"^ct:(\d{20})$")

#: (schema, table) of each table Change Tracking records, with its minimum valid version.
Tracked = Mapping[tuple[str, str], int]


def version_text(version: int) -> str:
    return f"{CHANGE_TRACKING_PREFIX}{version:020d}"


def parse_version(text: str) -> int:
    found = _VERSION.match(text.strip())
    if found is None:
        raise TidemarkError(f"not a Change Tracking version ('ct:' and 20 digits): {text!r}")
    return int(found.group(1))


def current_version(source: JdbcConnection, dialect: Dialect) -> int:
    """CHANGE_TRACKING_CURRENT_VERSION(): no change can commit at or below it any more."""
    rows = source.query(dialect.change_tracking_version_query())
    text = rows[0][0] if rows else None
    if text is None or not text.strip().isdigit():
        raise TidemarkError(
            f"the source returned no Change Tracking version ({text!r}): Change Tracking is not enabled on its "
            "database (ALTER DATABASE ... SET CHANGE_TRACKING = ON)"
        )
    return int(text)


def tracked_tables(source: JdbcConnection, dialect: Dialect) -> dict[tuple[str, str], int]:
    """Every table whose changes the source records, in one query (none where the source cannot)."""
    installed = dialect.change_tracking_installed_query()
    if installed is not None and str(source.query(installed)[0][0]) != "1":
        return {}
    return {(str(s), str(t)): int(str(v)) for s, t, v in source.query(dialect.change_tracking_query())}


def tracked_since(tracked: Tracked, table: SourceTable) -> int | None:
    """The table's minimum valid version in `tracked`; None when Change Tracking does not record it."""
    found = tracked.get((table.schema, table.name))
    if found is not None:
        return found
    # SQL Server compares names without case unless the database's collation says otherwise.
    folded = (table.schema.lower(), table.name.lower())
    matches = [v for (s, t), v in tracked.items() if (s.lower(), t.lower()) == folded]
    return matches[0] if len(matches) == 1 else None


def _on_key(dialect: Dialect, keys: Sequence[SourceColumn]) -> str:
    return " and ".join(f"t.{dialect.quote(k.name)} = ct.{dialect.quote(k.name)}" for k in keys)


def changed_rows_relation(dialect: Dialect, table: SourceTable, keys: Sequence[SourceColumn], since: int) -> str:
    """The rows, as the table holds them now, of every key changed after version `since`: a relation
    that a run's reads select from as they would from the table."""
    changes = dialect.changes_relation(table.schema, table.name, since)
    rows = f"{dialect.table_ref(table.schema, table.name)} as t"
    return f"(select t.* from {changes} inner join {rows} on {_on_key(dialect, keys)}) as tidemark_changed"


def deleted_keys_query(dialect: Dialect, table: SourceTable, keys: Sequence[SourceColumn], since: int) -> str:
    """The keys changed after version `since` that the table no longer holds, as text their replica
    columns cast back exactly: the run's tombstones."""
    changes = dialect.changes_relation(table.schema, table.name, since)
    rows = f"{dialect.table_ref(table.schema, table.name)} as t"
    texts = ", ".join(dialect.key_text(k, "ct.") for k in keys)
    return (
        f"select {texts} from {changes} left outer join {rows} on {_on_key(dialect, keys)}"
        f" where t.{dialect.quote(keys[0].name)} is null"
    )
