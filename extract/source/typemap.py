"""Map source column types to Postgres types through seeds/type_map.csv."""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from extract.config.seeds import read_csv
from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn, SourceTable

DIALECTS = ("sqlserver", "postgres", "spark")
#: What a target_type may say about the source column's declared type.
PLACEHOLDERS = frozenset({"length", "precision", "scale"})
#: Why the target refuses a type name (extract/source/target_types.py), or None when it takes it.
TypeCheck = Callable[[str], str | None]


@dataclass(frozen=True)
class MappedColumn:
    source: SourceColumn
    target_name: str
    target_type: str
    #: "native": the JDBC value as it is (dates and date-times as numbers, Dialect.select_expression);
    #: "text": read as text, cast by Postgres.
    transfer: str
    #: The type map's notes on this mapping (why it is lossy or what it takes), for the docs.
    note: str = ""


def _placeholders(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise TidemarkError(f"target_type {template!r}: {exc}") from None


class TypeMap:
    """The type map, every row checked when it is read: with `check`, every target_type (and every
    type a column maps to) must be a type the target's own parser takes."""

    def __init__(self, seeds_dir: Path, check: TypeCheck | None = None) -> None:
        path = seeds_dir / "type_map.csv"
        rows = read_csv(path, {"source_dialect", "source_type", "target_type", "transfer"}, {"notes"})
        self._check = check
        self._rows: dict[tuple[str, str], tuple[str, str, str]] = {}
        for number, row in rows:
            where = f"{path} line {number}"
            if row["source_dialect"] not in DIALECTS:
                dialect = row["source_dialect"]
                raise TidemarkError(f"{where}: source_dialect must be {' or '.join(DIALECTS)}, not {dialect!r}")
            if row["transfer"] not in {"native", "text"}:
                raise TidemarkError(f"{where}: transfer must be native or text, not {row['transfer']!r}")
            unknown = _placeholders(row["target_type"]) - PLACEHOLDERS
            if unknown:
                raise TidemarkError(
                    f"{where}: target_type {row['target_type']!r} uses {', '.join(sorted(unknown))}; "
                    "only {length}, {precision} and {scale} are known"
                )
            key = (row["source_dialect"], row["source_type"].lower())
            if key in self._rows:
                raise TidemarkError(f"{where}: {key[0]} type {row['source_type']!r} is mapped twice")
            self._rows[key] = (row["target_type"], row["transfer"], row.get("notes", ""))
            # A sample of the modifiers each placeholder stands for: the shape of the type is what is checked.
            self._refuse_unknown(where, row["target_type"].format(length=1, precision=1, scale=0))

    def _refuse_unknown(self, where: str, target_type: str) -> None:
        problem = None if self._check is None else self._check(target_type)
        if problem is not None:
            raise TidemarkError(f"{where}: target_type {target_type!r} is not a Postgres type: {problem}")

    def map_column(self, dialect: str, table: SourceTable, column: SourceColumn) -> MappedColumn:
        shape = column.type_shape
        found = self._rows.get((dialect, column.type_text.lower())) or self._rows.get((dialect, shape))
        if found is None:
            raise TidemarkError(
                f"{table.qualified}.{column.name}: source type {column.type_text!r} ({dialect}) is not in "
                f"seeds/type_map.csv; add a row '{dialect},{shape},<postgres type>,native|text'"
            )
        template, transfer, note = found
        target = template.format(length=column.length, precision=column.precision, scale=column.scale)
        self._refuse_unknown(f"seeds/type_map.csv, for {table.qualified}.{column.name} ({column.type_text})", target)
        return MappedColumn(column, column.name.lower(), target, transfer, note)

    def map_table(self, dialect: str, table: SourceTable) -> list[MappedColumn]:
        mapped = [self.map_column(dialect, table, column) for column in table.columns]
        seen: dict[str, str] = {}
        for col in mapped:
            if col.target_name in seen:
                raise TidemarkError(
                    f"{table.qualified}: columns {seen[col.target_name]!r} and {col.source.name!r} "
                    f"would both be replica column {col.target_name!r} (names are folded to lower case)"
                )
            seen[col.target_name] = col.source.name
        return mapped
