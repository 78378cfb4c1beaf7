"""What every reader of one table has: the run's context and the table's plan; and, for the readers whose
runs go in the run log, the table's extract lock (a sync and a reconcile of one table never overlap)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from extract.core.state_schema import StateSchema
from extract.lifecycle.context import RunContext
from extract.lifecycle.journal import Journal, RunLogJournal
from extract.lifecycle.reader import RunLock
from extract.planning.table_plan import TablePlan
from extract.state.run_log import RunRecord


@dataclass
class TableReader:
    context: RunContext
    plan: TablePlan

    @property
    def table(self) -> str:
        return self.plan.config.key

    @property
    def state(self) -> StateSchema:
        return self.context.settings.state_schema

    @property
    def table_key(self) -> str:
        return self.plan.names.table_key


@dataclass
class RunLogReader(TableReader):
    @property
    def journal(self) -> Journal[RunRecord]:
        return RunLogJournal(self.state)

    @property
    def lock(self) -> RunLock:
        return RunLock(self.table_key, f"a sync or reconcile of {self.table} is running; try again when it ends")

    def run_record(
        self, run_id: int, migration_type: str, watermark_used: str | None, source_filter: str | None = None
    ) -> RunRecord:
        """A new run of the table, reading from `watermark_used` (None: every row)."""
        plan = self.plan
        return RunRecord(
            run_id=run_id,
            table_key=self.table_key,
            source_schema=plan.table.schema,
            source_table=plan.table.name,
            target_schema=plan.names.schema,
            target_table=plan.names.table,
            migration_type=migration_type,
            cursor_column=plan.cursor.name if plan.cursor else None,
            watermark_used=watermark_used,
            started_at=datetime.now(UTC),
            source_filter=source_filter,
            rows_landed=0,
            partitions_landed=0,
            plan_fingerprint=plan.fingerprint,
        )
