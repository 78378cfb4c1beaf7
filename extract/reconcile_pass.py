"""One reconcile pass: every table asked for is compared with its source (several at once), and `--dbt`'s
dbt merges what waits before and applies the repairs after."""

from __future__ import annotations

import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from extract.config.naming import TargetNames
from extract.console import ConsoleObserver
from extract.core.errors import EXIT_DBT_FAILED, EXIT_OK, EXIT_TABLE_FAILED, about_table, shown_error
from extract.core.secrets import mask
from extract.lifecycle.run import check_target_state
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.readers.reconcile_repairs import reconcile_table
from extract.reconcile.result import ReconcileOptions
from extract.report import DbtReport, Outcome, PassReport, TableReport
from extract.runtime.dbt import DbtProcess
from extract.state.waiting import models_to_merge


@dataclass(frozen=True)
class ReconcileRequest:
    table_names: list[str] | None  # None: every enabled table
    options: ReconcileOptions
    quiet: bool
    json: bool
    verbose: bool = False


class ReconcilePass:
    def __init__(self, planner: Planner, dbt: DbtProcess | None, request: ReconcileRequest) -> None:
        self.planner = planner
        self.dbt = dbt
        self.request = request
        self.observer = ConsoleObserver(quiet=request.quiet or request.json)

    def run(self) -> Outcome:
        planner, request = self.planner, self.request
        names = request.table_names
        configs = planner.selected(names)
        plans = [planner.plan(config) for config in configs]  # bad configuration stops all, nothing written
        check_target_state(planner.settings)
        dbt_runs: list[bool] = []
        replicas = {plan.config.key: plan.names for plan in plans}
        if self.dbt is not None:
            if not self.dbt.vouched:
                self.dbt.check_arguments()
            self._dbt(replicas, [], dbt_runs)  # merge what waits, so that the replicas are compared merged
        workers = planner.settings.max_parallel_transfers
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="table") as pool:
            summary = list(pool.map(self._reconcile, plans))
        landed = [entry.table for entry in summary if entry.status == "landed"]
        if self.dbt is not None and landed:
            self._dbt(replicas, landed, dbt_runs)
        return self._outcome(summary, dbt_runs)

    def _dbt(self, replicas: dict[str, TargetNames], landed: list[str], runs: list[bool]) -> None:
        """dbt, for the tables that landed repairs or have runs waiting; what it did is added to `runs`."""
        assert self.dbt is not None
        settings = self.planner.settings
        models = models_to_merge(settings.target, settings.state_schema, replicas, landed)
        if models:
            runs.append(self.dbt.run(quiet=self.request.quiet, stdout_is_data=self.request.json, models=models))

    def _reconcile(self, plan: TablePlan) -> TableReport:
        try:
            result = reconcile_table(self.planner.context, plan, self.request.options, self.observer)
            if not self.request.verbose:
                result.withhold_keys()
            return TableReport(plan.config.key, result.status, result)
        except Exception as exc:  # one table's failure must not stop the others
            message = shown_error(exc, self.request.verbose)  # a key value only with --verbose
            if self.request.verbose:
                print(mask("".join(traceback.format_exception(exc))), file=sys.stderr)
            print(f"error: {about_table(plan.config.key, message)}", file=sys.stderr)
            return TableReport(plan.config.key, "failed", error=message)

    def _outcome(self, summary: list[TableReport], dbt_runs: list[bool]) -> Outcome:
        dbt = None
        if self.dbt is not None:
            dbt = DbtReport(self.dbt.ran_with or self.dbt.args, all(dbt_runs), self.dbt.failure, len(dbt_runs))
        report = PassReport(summary, dbt=dbt)
        failed = report.failed
        if self.dbt is not None and not all(dbt_runs):
            print(f"dbt {' '.join(self.dbt.requested)} failed ({self.dbt.failure})", file=sys.stderr)
        if failed:
            print(f"{len(failed)} of {len(summary)} table(s) failed: {', '.join(failed)}", file=sys.stderr)
            return Outcome(report, EXIT_TABLE_FAILED)
        return Outcome(report, EXIT_DBT_FAILED if not all(dbt_runs) else EXIT_OK)
