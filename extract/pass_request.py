"""What a pass is asked to do (the command line's tables and options), and one table of it, planned."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from extract.config.seeds import SyncTable
from extract.core.observer import Observer
from extract.planning.table_plan import TablePlan
from extract.reconcile.result import ReconcileOptions


@dataclass(frozen=True)
class TableJob:
    """One table of a pass, planned: `run` lands it and returns its result (a dataclass)."""

    config: SyncTable
    run: Callable[[Observer], Any]
    #: The plan of a sync of changed rows: a check may stand in for it (extract/readers/unchanged.py).
    checkable: TablePlan | None = None


@dataclass(frozen=True)
class PassRequest:
    """What the command line asked for: which tables, and how to say what happens."""

    table_names: list[str] | None  # None: every enabled table (--all)
    as_of: date | None
    snapshot_file: Path | None
    quiet: bool
    json: bool
    #: Print each error's stack traces (Python and Java) too.
    verbose: bool = False
    #: Reconcile the tables that landed after the merge: every pass (0), or when this long passed since.
    reconcile_every: timedelta | None = None
    reconcile_options: ReconcileOptions = field(default_factory=ReconcileOptions)
    #: Read every configured table's definition on the first pass, not only the changed ones.
    full_catalog: bool = False
    #: Land every row again and replace the replicas (the first pass only).
    full_refresh: bool = False
