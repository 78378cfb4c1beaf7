"""What tidemark knows about a source table, independent of dialect."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceColumn:
    name: str
    base_type: str  # lower case, without length: "nvarchar", "datetime2", "numeric"
    length: int | None  # characters or bytes as the type counts them; -1 means "max"
    precision: int | None
    scale: int | None
    nullable: bool
    ordinal: int

    @property
    def type_text(self) -> str:
        """The declared type as a DDL would say it, e.g. nvarchar(50), decimal(8,2), varbinary(max)."""
        if self.length is not None:
            return f"{self.base_type}({'max' if self.length == -1 else self.length})"
        if self.precision is not None and self.scale is not None:
            return f"{self.base_type}({self.precision},{self.scale})"
        if self.precision is not None:
            return f"{self.base_type}({self.precision})"
        return self.base_type


@dataclass(frozen=True)
class SourceTable:
    schema: str
    name: str
    columns: tuple[SourceColumn, ...]
    primary_key: tuple[str, ...]

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def column(self, name: str) -> SourceColumn | None:
        return next((c for c in self.columns if c.name == name), None)
