"""The rows, as a table holds them now, of a set of keys the source says changed, and those of the keys
it no longer holds. The keys come as a relation aliased `ct` with the key's columns under their own names
(Change Tracking's CHANGETABLE, or the keys of CDC's change rows)."""

from __future__ import annotations

from collections.abc import Sequence

from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import Dialect


def _on_key(dialect: Dialect, keys: Sequence[SourceColumn]) -> str:
    return " and ".join(f"t.{dialect.quote(k.name)} = ct.{dialect.quote(k.name)}" for k in keys)


def rows_of_keys(dialect: Dialect, table: SourceTable, keys: Sequence[SourceColumn], changes: str) -> str:
    """The table's rows of the keys in `changes`: a relation that a run's reads select from as they would
    from the table."""
    rows = f"{dialect.table_ref(table.schema, table.name)} as t"
    return f"(select t.* from {changes} inner join {rows} on {_on_key(dialect, keys)}) as tidemark_changed"


def keys_gone(dialect: Dialect, table: SourceTable, keys: Sequence[SourceColumn], changes: str) -> str:
    """The keys in `changes` the table no longer holds, as text their replica columns cast back exactly."""
    rows = f"{dialect.table_ref(table.schema, table.name)} as t"
    texts = ", ".join(dialect.key_text(k, "ct.") for k in keys)
    return (
        f"select {texts} from {changes} left outer join {rows} on {_on_key(dialect, keys)}"
        f" where t.{dialect.quote(keys[0].name)} is null"
    )
