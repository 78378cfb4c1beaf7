"""Map source column types to Postgres types through seeds/type_map.csv."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from extract.catalog import SourceColumn, SourceTable
from extract.errors import TidemarkError
from extract.seeds import read_csv


@dataclass(frozen=True)
class MappedColumn:
    source: SourceColumn
    target_name: str
    target_type: str
    transfer: str  # "native": the JDBC value as it is; "text": read as text, cast by Postgres


class TypeMap:
    def __init__(self, seeds_dir: Path) -> None:
        rows = read_csv(
            seeds_dir / "type_map.csv", {"source_dialect", "source_type", "target_type", "transfer"}, {"notes"}
        )
        self._rows: dict[tuple[str, str], tuple[str, str]] = {}
        for row in rows:
            if row["transfer"] not in {"native", "text"}:
                raise TidemarkError(f"type_map.csv: transfer must be native or text, not {row['transfer']!r}")
            self._rows[(row["source_dialect"], row["source_type"].lower())] = (row["target_type"], row["transfer"])

    def map_column(self, dialect: str, table: SourceTable, column: SourceColumn) -> MappedColumn:
        shape = column.type_shape
        found = self._rows.get((dialect, column.type_text.lower())) or self._rows.get((dialect, shape))
        if found is None:
            raise TidemarkError(
                f"{table.qualified}.{column.name}: source type {column.type_text!r} ({dialect}) is not in "
                f"seeds/type_map.csv; add a row '{dialect},{shape},<postgres type>,native|text'"
            )
        template, transfer = found
        target = template.format(length=column.length, precision=column.precision, scale=column.scale)
        return MappedColumn(column, column.name.lower(), target, transfer)

    def map_table(self, dialect: str, table: SourceTable) -> list[MappedColumn]:
        mapped = [self.map_column(dialect, table, column) for column in table.columns]
        seen: dict[str, str] = {}
        for col in mapped:
            if col.target_name in seen:
                raise TidemarkError(
                    f"{table.qualified}: columns {seen[col.target_name]!r} and {col.source.name!r} "
                    "fold to the same lower-case name"
                )
            seen[col.target_name] = col.source.name
        return mapped
