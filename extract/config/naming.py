"""Where a source table lands in the target: schema {alias}__{database}__{schema}, names folded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extract.config.seeds import SyncTable, fold_name
from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError
from extract.core.sql_contract import (
    CHANGED_KEYS_PREFIX,
    HISTORY_SUFFIX,
    KEPT_FIGURES_PREFIX,
    MAX_NAME_BYTES,
    TOMBSTONE_PREFIX,
)

STAGING_PREFIX = "stg__"
FIRST_SYNC_PREFIX = "stg_first__"
SNAPSHOT_PREFIX = "snap__"
ASOF_HISTORY_SUFFIX = "__asof_history"
#: Columns tidemark or dbt add beside a replica's own: in staging, in the dbt snapshot, in the as-of history.
RESERVED_PREFIX = "_tidemark_"
RESERVED_COLUMNS = frozenset(
    {"dbt_scd_id", "dbt_updated_at", "dbt_valid_from", "dbt_valid_to", "dbt_is_deleted", "valid_from", "valid_to"}
)


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
    def tombstone_table(self) -> str:
        """Where a reconcile lands the keys the replica holds and the source does not."""
        return TOMBSTONE_PREFIX + self.table

    @property
    def kept_figures_table(self) -> str:
        """The replica's figures a reconcile keeps for the next one (extract/reconcile/kept_figures.py)."""
        return KEPT_FIGURES_PREFIX + self.table

    @property
    def changed_keys_table(self) -> str:
        """The keys merges changed since the replica's dbt snapshot last ran (see history_changes.sql)."""
        return CHANGED_KEYS_PREFIX + self.table

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

    def identifiers(self, asof_history: bool) -> tuple[str, ...]:
        """Every name the target holds for this table: its schema and each relation beside the replica."""
        names = [self.schema, self.table, self.staging_table, self.first_sync_table, self.tombstone_table]
        names.append(self.kept_figures_table)
        names.append(self.table + HISTORY_SUFFIX)
        if asof_history:
            names += [self.snapshot_table, self.snapshot_table + "__run", self.asof_history_table]
        return tuple(names)


def check_name_fits(name: str, what: str) -> None:
    """Refuse a name the target would cut short: two names could then become one."""
    size = len(name.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise TidemarkError(
            f"{what} {name!r} is {size} bytes long, and PostgreSQL keeps only {MAX_NAME_BYTES} bytes of a name: "
            "the replica could not hold it exactly"
        )


def check_column_names(table: str, names: Sequence[str], remedy: str = "rename it in a view to sync it") -> None:
    """Replica column names must fit and must not be one of the columns tidemark or dbt add."""
    for name in names:
        check_name_fits(name, f"{table}: column")
        if name.startswith(RESERVED_PREFIX) or name in RESERVED_COLUMNS:
            raise TidemarkError(
                f"{table}: column {name!r} has a name tidemark or dbt use for their own columns "
                f"({RESERVED_PREFIX}..., {', '.join(sorted(RESERVED_COLUMNS))}); {remedy}"
            )


def check_distinct_replicas(source: DatabaseUrl, aliases: dict[str, str], tables: Sequence[SyncTable]) -> None:
    """Refuse two configured tables that land on one replica, naming both; and names too long to hold."""
    seen: dict[tuple[str, str], SyncTable] = {}
    for config in tables:
        names = target_names(source, aliases, config.source_schema, config.source_table)
        for name in names.identifiers(config.asof_history):
            check_name_fits(name, f"{config.key}: the replica's name")
        other = seen.setdefault((names.schema, names.table), config)
        if other is not config:
            raise TidemarkError(
                f"sync_tables.csv: {other.key!r} and {config.key!r} would both land in replica {names.table_key} "
                "(names are folded to lower case, other characters to '_'); sync only one of them, or give "
                "one a view with another name in the source"
            )


def target_names(source: DatabaseUrl, aliases: dict[str, str], schema: str, table: str) -> TargetNames:
    alias = aliases.get(source.host.lower(), source.host)
    return TargetNames(
        schema=f"{fold_name(alias)}__{fold_name(source.database)}__{fold_name(schema)}",
        table=fold_name(table),
    )
