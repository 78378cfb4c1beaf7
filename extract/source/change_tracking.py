"""What a Change Tracking read asks the source: the current version, the changed rows as they are now, and
the changed keys the table no longer holds.

A version is kept in the state as 'ct:' and 20 digits, so that versions sort as text as they do as
numbers (the state's views take the greatest) and no other reader's state can pass for one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.changed_keys import keys_gone, rows_of_keys
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection
from extract.source.watermarks import CHANGE_TRACKING_PREFIX

_VERSION = re.compile(r"^ct:(\d{20})$")


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


def changed_rows_relation(dialect: Dialect, table: SourceTable, keys: Sequence[SourceColumn], since: int) -> str:
    """The rows, as the table holds them now, of every key changed after version `since`."""
    return rows_of_keys(dialect, table, keys, dialect.changes_relation(table.schema, table.name, since))


def deleted_keys_query(dialect: Dialect, table: SourceTable, keys: Sequence[SourceColumn], since: int) -> str:
    """The keys changed after version `since` that the table no longer holds: the run's tombstones."""
    return keys_gone(dialect, table, keys, dialect.changes_relation(table.schema, table.name, since))
