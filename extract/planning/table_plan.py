"""A configured table as it was found in the source and will be landed in the target."""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple, dataclass, fields

from extract.config.naming import TargetNames
from extract.config.seeds import GUARD_COLUMNS, SyncTable
from extract.core.state_schema import StateSchema
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.recorded_tables import ChangeSource
from extract.source.typemap import MappedColumn


@dataclass(frozen=True)
class TablePlan:
    config: SyncTable
    table: SourceTable
    columns: list[MappedColumn]
    cursor: SourceColumn | None
    names: TargetNames
    #: The target's schema for tidemark's state, where the table's runs are logged.
    state: StateSchema
    #: How the source records the table's changes itself, when a reader of them reads it (else None).
    changes: ChangeSource | None = None

    @property
    def fingerprint(self) -> str:
        """What the replica is built to: every planned column as the source has it and as it lands, the key,
        the cursor and the seed's settings. A run records it; a table whose plan changed since its latest
        run is run again, never only checked for changes (extract/readers/unchanged.py)."""
        shape: tuple[object, ...] = (
            [[astuple(c.source), c.target_name, c.target_type, c.transfer] for c in self.columns],
            self.key_columns,
            self.cursor and self.cursor.name,
            # Not the reconcile's guard: it does not change what the replica is built to.
            [getattr(self.config, f.name) for f in fields(self.config) if f.name not in GUARD_COLUMNS],
        )
        if self.changes is not None:
            shape += (self.changes.reader,)
        return hashlib.sha256(json.dumps(shape, default=str).encode()).hexdigest()

    @property
    def origin(self) -> str:
        """Where the replica's rows come from, as its docs say it: the source table, or a file source's files."""
        if self.config.reader == "files":
            return f"the files {self.table.name} in {self.table.schema}"
        return self.table.qualified

    @property
    def key_columns(self) -> list[str]:
        """The key's replica column names."""
        return [name.lower() for name in self.table.primary_key]

    @property
    def record_column(self) -> str | None:
        """The replica column of the seed's record_id, if any."""
        name = self.config.record_id
        return None if name is None else next(c.target_name for c in self.columns if c.source.name == name)

    @property
    def unique_key_columns(self) -> list[list[str]]:
        """The replica columns of each of the seed's unique_keys."""
        by_source = {c.source.name: c.target_name for c in self.columns}
        return [[by_source[name] for name in key] for key in self.config.unique_keys]

    @property
    def unique_constraints(self) -> list[tuple[str, list[str]]]:
        """(the seed's setting, replica columns) of each unique constraint the replica carries besides
        its key: the record id's, then the seed's unique_keys."""
        record = self.record_column
        labels = [f"unique_keys {'|'.join(key)!r}" for key in self.config.unique_keys]
        own = [(f"record_id {self.config.record_id!r}", [record])] if record is not None else []
        return own + list(zip(labels, self.unique_key_columns, strict=True))

    @property
    def unique_settings(self) -> list[tuple[str, list[str], list[str]]]:
        """(the seed's setting, source columns, replica columns) of each unique constraint besides the key."""
        sources = [[self.config.record_id]] if self.config.record_id is not None else []
        sources += [list(key) for key in self.config.unique_keys]
        return [
            (label, source, replica) for (label, replica), source in zip(self.unique_constraints, sources, strict=True)
        ]

    @property
    def source_keys(self) -> list[SourceColumn]:
        """The key's source columns, in key order."""
        return [c for name in self.table.primary_key if (c := self.table.column(name)) is not None]

    @property
    def mapped_keys(self) -> list[MappedColumn]:
        """The key's columns as landed, in key order."""
        return [c for name in self.key_columns for c in self.columns if c.target_name == name]
