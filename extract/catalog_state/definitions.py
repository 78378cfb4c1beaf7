"""A table's definition as the catalog state keeps it (JSON), and what changed between two of them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from extract.source.catalog import SourceColumn, SourceTable


def to_json(table: SourceTable) -> dict[str, Any]:
    """The declared columns and key (not the seed's overrides: those apply when a table is planned)."""
    return {"columns": [asdict(c) for c in table.columns], "primary_key": list(table.primary_key)}


def from_json(schema: str, name: str, definition: dict[str, Any]) -> SourceTable:
    columns = tuple(SourceColumn(**column) for column in definition["columns"])
    return SourceTable(schema, name, columns, tuple(definition["primary_key"]))


@dataclass(frozen=True)
class CatalogChange:
    """One line of a catalog read's diff."""

    source_schema: str
    source_table: str
    change: str  # table_added, table_removed, column_added, column_dropped, column_retyped, key_changed
    column_name: str | None = None
    old_definition: str | None = None
    new_definition: str | None = None

    @property
    def table_key(self) -> str:
        return f"{self.source_schema}.{self.source_table}"

    def describe(self) -> str:
        """What changed, for a person: 'column Email added (nvarchar(100) null)'."""
        what = self.change.split("_")
        subject = f"{what[0]} {self.column_name}" if self.column_name else what[0]
        detail = " -> ".join(d for d in (self.old_definition, self.new_definition) if d)
        return f"{subject} {what[1]}" + (f" ({detail})" if detail else "")


def column_text(column: SourceColumn) -> str:
    return f"{column.type_text} {'null' if column.nullable else 'not null'}"


def changes(old: SourceTable | None, new: SourceTable | None) -> list[CatalogChange]:
    """What turned `old` into `new` (either may be None: the table was added or removed)."""
    table = new or old
    assert table is not None
    at = (table.schema, table.name)
    if old is None:
        return [CatalogChange(*at, "table_added")]
    if new is None:
        return [CatalogChange(*at, "table_removed")]
    found: list[CatalogChange] = []
    before = {c.name: c for c in old.columns}
    after = {c.name: c for c in new.columns}
    for name, column in after.items():
        previous = before.get(name)
        if previous is None:
            found.append(CatalogChange(*at, "column_added", name, None, column_text(column)))
        elif column_text(previous) != column_text(column):
            found.append(CatalogChange(*at, "column_retyped", name, column_text(previous), column_text(column)))
    for name, column in before.items():
        if name not in after:
            found.append(CatalogChange(*at, "column_dropped", name, column_text(column), None))
    if old.primary_key != new.primary_key:
        found.append(CatalogChange(*at, "key_changed", None, "|".join(old.primary_key), "|".join(new.primary_key)))
    return found
