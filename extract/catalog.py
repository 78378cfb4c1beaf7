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

    def _modifiers(self, symbolic: bool) -> str:
        if self.length is not None:
            return "(max)" if self.length == -1 else ("(n)" if symbolic else f"({self.length})")
        if self.precision is not None and self.scale is not None:
            return "(p,s)" if symbolic else f"({self.precision},{self.scale})"
        if self.precision is not None:
            return "(p)" if symbolic else f"({self.precision})"
        return ""

    @property
    def type_text(self) -> str:
        """The declared type as a DDL would say it, e.g. nvarchar(50), decimal(8,2), varbinary(max)."""
        return self.base_type + self._modifiers(symbolic=False)

    @property
    def type_shape(self) -> str:
        """The type with its modifiers named by role, as type_map.csv keys it: nvarchar(n), decimal(p,s)."""
        return self.base_type + self._modifiers(symbolic=True)


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
