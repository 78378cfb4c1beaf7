"""A configured table as it was found in the source and will be landed in the target."""

from __future__ import annotations

from dataclasses import dataclass

from extract.config.naming import TargetNames
from extract.config.seeds import SyncTable
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.typemap import MappedColumn


@dataclass(frozen=True)
class TablePlan:
    config: SyncTable
    table: SourceTable
    columns: list[MappedColumn]
    cursor: SourceColumn | None
    names: TargetNames

    @property
    def key_columns(self) -> list[str]:
        return [name.lower() for name in self.table.primary_key]
