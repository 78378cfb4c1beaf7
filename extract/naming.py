"""Where a source table lands in the target: schema {alias}__{database}__{schema}, names folded."""

from __future__ import annotations

from dataclasses import dataclass

from extract.seeds import fold_name
from extract.urls import DatabaseUrl

STAGING_PREFIX = "stg__"
FIRST_SYNC_PREFIX = "stg_first__"
SNAPSHOT_PREFIX = "snap__"
ASOF_HISTORY_SUFFIX = "__asof_history"


@dataclass(frozen=True)
class TargetNames:
    schema: str
    table: str

    @property
    def staging_table(self) -> str:
        return STAGING_PREFIX + self.table

    @property
    def first_sync_table(self) -> str:
        """Where a first sync lands, logged, before it becomes staging and then the replica itself."""
        return FIRST_SYNC_PREFIX + self.table

    @property
    def snapshot_table(self) -> str:
        """Where snapshots for the as-of history land."""
        return SNAPSHOT_PREFIX + self.table

    @property
    def asof_history_table(self) -> str:
        return self.table + ASOF_HISTORY_SUFFIX

    @property
    def table_key(self) -> str:
        """The replica's identity in the state logs (dbt computes the same from `this`)."""
        return f"{self.schema}.{self.table}"

    @property
    def model_name(self) -> str:
        return f"{self.schema}__{self.table}"


def target_names(source: DatabaseUrl, aliases: dict[str, str], schema: str, table: str) -> TargetNames:
    alias = aliases.get(source.host.lower(), source.host)
    return TargetNames(
        schema=f"{fold_name(alias)}__{fold_name(source.database)}__{fold_name(schema)}",
        table=fold_name(table),
    )
