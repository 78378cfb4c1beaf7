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
    #: False when the key is an override the source does not declare: it may hold a key twice.
    key_enforced: bool = True

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def column(self, name: str) -> SourceColumn | None:
        return next((c for c in self.columns if c.name == name), None)


_LENGTH_TYPES = frozenset({"char", "varchar", "nchar", "nvarchar", "binary", "varbinary"})


def column_from_type_text(name: str, type_text: str, nullable: bool, ordinal: int) -> SourceColumn:
    """A column from a declared SQL Server type such as nvarchar(50), decimal(8,2) or varbinary(max)."""
    base, _, rest = type_text.strip().lower().partition("(")
    args = [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]
    length = precision = scale = None
    if base in _LENGTH_TYPES and args:
        length = -1 if args[0] == "max" else int(args[0])
    elif base in {"decimal", "numeric"} and args:
        precision, scale = int(args[0]), int(args[1]) if len(args) > 1 else 0
    elif args:
        precision = int(args[0])
    return SourceColumn(name, base.strip(), length, precision, scale, nullable, ordinal)
