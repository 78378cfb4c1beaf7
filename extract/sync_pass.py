"""One pass of the extract: every table asked for lands (several at once), then `--dbt`'s dbt runs."""

from __future__ import annotations

import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from extract.catalog_state.read import CatalogRead
from extract.config.file_sources import FileSource, read_file_sources
from extract.config.naming import TargetNames
from extract.config.seeds import SyncTable
from extract.config.settings import Settings
from extract.console import ConsoleObserver
from extract.core.errors import EXIT_DBT_FAILED, EXIT_OK, EXIT_TABLE_FAILED, TidemarkError, about_table, shown_error
from extract.core.observer import Note, Observer
from extract.core.secrets import mask
from extract.file_jobs import file_job
from extract.files.selection import split_names
from extract.landing.staging import create_schemas
from extract.lifecycle.context import RunContext
from extract.lifecycle.run import check_target_state
from extract.pass_checks import unchanged_tables
from extract.pass_request import PassRequest, TableJob
from extract.planning.file_plan import stream_names
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.project.follow_catalog import follow_catalog, touches_project
from extract.readers.asof_snapshot import SnapshotLanding
from extract.reconcile.prime import prime
from extract.reconcile_pass import ReconcilePass, ReconcileRequest
from extract.report import DbtReport, Outcome, PassReport, TableReport
from extract.runtime.dbt import DbtProcess
from extract.runtime.spark import SparkRuntime
from extract.source.dialects import Dialect
from extract.state.waiting import models_to_merge
from extract.sync_table import sync_table


class SyncPass:
    """Runs passes with one Spark runtime and one dbt project, as many times as asked (`--every`)."""

    def __init__(self, settings: Settings, runtime: SparkRuntime, dbt: DbtProcess | None, request: PassRequest):
        self.settings = settings
        self.runtime = runtime
        self.dbt = dbt
        self.request = request
        self._reconciled_at: float | None = None
        self._catalog_reads = 0
        self._catalog: dict[str, object] = {}
        self._file_keys: set[str] = set()
        #: The source's dialect, the plans of the pass's syncs and its console, for what follows the merge.
        self._planned: tuple[Dialect, dict[str, TablePlan], Observer] | None = None
        #: The tables this pass's checks found rows to read in.
        self._with_rows: set[str] = set()

    def _tables(self, planner: Planner, names: list[str] | None, files: list[FileSource]) -> list[SyncTable]:
        if names == [] or (names is None and files and not planner.enabled_tables()):
            return []  # only file sources
        tables = planner.selected(names)
        if self.request.as_of is not None and names is None:
            tables = [t for t in tables if t.asof_history]
            if not tables:
                raise TidemarkError("--snapshot-date --all: no enabled table has asof_history set in sync_tables.csv")
        return tables

    def run(self, keep_runtime: bool) -> Outcome:
        """One pass. Unless `keep_runtime`, the driver JVM is let go before dbt runs (see SparkRuntime.stop).

        Every table is planned (catalog, type map, names, a snapshot file's columns) before any lands:
        bad configuration anywhere stops the pass with nothing written.
        """
        request = self.request
        # Connections to the source live for one pass: a loop may sleep longer than a server keeps them.
        context = RunContext.open(self.settings, self.runtime)
        planner: Planner | None = None
        try:
            check_target_state(self.settings)
            # The seeds and the type map: bad ones are refused before the JVM is started for nothing.
            planner = Planner(context)
            self.runtime.start_source_in_background()  # for the catalog and the checks; Spark only to land
            if self.dbt is not None and not self.dbt.vouched:
                # dbt's profile and arguments, refused before anything is written (dbt's import meanwhile
                # overlaps the JVM's start); when a record vouches for them, again before dbt runs.
                self.dbt.check_arguments()
            file_sources = [] if request.as_of else read_file_sources(self.settings.seeds_dir)
            files, table_names = split_names(file_sources, request.table_names)
            tables = self._tables(planner, table_names, files)
            if self.dbt is not None:
                self.dbt.import_ahead_for(len(tables) + len(files))
            self._file_keys = {source.key for source in files}
            observer = ConsoleObserver(quiet=request.quiet or request.json)
            self._read_catalog(planner, observer)
            replicas = {config.key: planner.names(config) for config in tables}
            replicas |= {source.key: stream_names(source) for source in files}
            workers = self.settings.max_parallel_transfers
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="table") as pool:
                jobs = list(pool.map(lambda config: self._job(planner, config), tables))
                recorded = planner.record_catalog()  # the pass goes ahead: its catalog read counts
                self._catalog["read"] = None if recorded is None else recorded.read_id
                prepare = None if self.dbt is None else self.dbt.prepare  # dbt's parse, once a table is to land
                unchanged, self._with_rows = unchanged_tables(planner, jobs, recorded, observer, pool.map, prepare)
                file_jobs = list(pool.map(lambda source: file_job(planner, source, observer), files))
                jobs += [job for job, _ in file_jobs]
                unchanged |= {job.config.key: report for job, report in file_jobs if report is not None}
                to_run = [job for job in jobs if job.config.key not in unchanged]
                if request.as_of is not None or any(job.config.key in self._file_keys for job in to_run):
                    self.runtime.start_in_background()  # they land through Spark; a table, once its size asks
                to_run = self._start_merge(replicas, to_run, recorded)
                reports = pool.map(lambda job: self._tell_dbt(self._sync(job, observer), replicas), to_run)
                ran = {report.table: report for report in reports}
                summary = [unchanged.get(job.config.key) or ran[job.config.key] for job in jobs]
            self._planned = (context.dialect, {j.config.key: j.checkable for j in jobs if j.checkable}, observer)
            if touches_project(recorded, [getattr(t.result, "schema_changes", []) for t in summary]):
                self._follow_catalog(planner, observer)
            if self._reconcile_due():
                return self._reconcile(planner, self._finish(summary, replicas))
        finally:
            if planner is not None:
                planner.close()
            context.close()
            if not keep_runtime:
                self.runtime.stop()
        return self._finish(summary, replicas)

    def _start_merge(
        self, replicas: dict[str, TargetNames], to_run: list[TableJob], recorded: CatalogRead | None
    ) -> list[TableJob]:
        """dbt is to run: it parses while the tables land and its run starts, merging each table as it lands, in
        dbt's order (runtime/dbt_flow.py); after a catalog read that changed the project (files written again),
        only once a check found rows in every table, held before its first query (DbtProcess.start)."""
        if self.dbt is None or not to_run:
            return to_run
        self.dbt.prepare()
        landing = [job.config.key for job in to_run]
        flow = not touches_project(recorded, [])
        if flow or set(landing) <= self._with_rows:
            create_schemas(self.settings.target, {replicas[key].schema for key in landing})  # before dbt's
            models = models_to_merge(self.settings.target, self.settings.state_schema, replicas, landing)
            self.dbt.start(self.request.quiet, self.request.json, models, flow)
            if flow:
                return sorted(to_run, key=lambda job: replicas[job.config.key].model_name)
        return to_run

    def _tell_dbt(self, report: TableReport, replicas: dict[str, TargetNames]) -> TableReport:
        """A flowing run of dbt told whether the table's merge can go on: it landed, and its replica's
        files stay as dbt parsed them."""
        if self.dbt is not None:
            changed = getattr(report.result, "schema_changes", None)
            self.dbt.landed(replicas[report.table].model_name, report.status == "landed" and not changed)
        return report

    def _read_catalog(self, planner: Planner, observer: Observer) -> None:
        """The catalog read every pass starts with: the tables whose definition changed are described."""
        read = planner.read_catalog(full=self.request.full_catalog and self._catalog_reads == 0)
        self._catalog_reads += 1
        self._catalog = {
            "read": None,
            "full": read.full,
            "described": len(read.described),
            "changes": [f"{change.table_key}: {change.describe()}" for change in read.changes],
        }
        for change in read.changes:
            observer(Note(change.table_key, f"source catalog: {change.describe()}"))

    def _follow_catalog(self, planner: Planner, observer: Observer) -> None:
        """The dbt files written again for the changed replicas, before this pass's dbt parses them."""
        written, problem = follow_catalog(planner, self.settings.project_dir)
        self._catalog["regenerated"] = [str(path.relative_to(self.settings.project_dir)) for path in written]
        text = problem or f"dbt files written again for the changed schemas ({len(written)} files)"
        observer(Note(None, text))

    def _reconcile_due(self) -> bool:
        every = self.request.reconcile_every
        if every is None or self.dbt is None:
            return False
        return self._reconciled_at is None or time.monotonic() - self._reconciled_at >= every.total_seconds()

    def _reconcile(self, planner: Planner, synced: Outcome) -> Outcome:
        """After the merge, reconcile the tables that landed or had nothing to read; `--dbt`'s dbt repairs."""
        request = self.request
        # A file source has no table to compare its replica with: its checkpoint of every file is its check.
        names = [n for n in synced.report.landed + synced.report.unchanged if n not in self._file_keys]
        if not names or synced.exit_code == EXIT_DBT_FAILED:
            return synced
        self._reconciled_at = time.monotonic()
        asked = ReconcileRequest(names, request.reconcile_options, request.quiet, request.json, request.verbose)
        reconciled = ReconcilePass(planner, self.dbt, asked).run()
        report = replace(synced.report, reconcile=reconciled.report)
        return Outcome(report, synced.exit_code or reconciled.exit_code)

    def _job(self, planner: Planner, config: SyncTable) -> TableJob:
        """What syncing one table takes, checked now: its plan, or its snapshot landing."""
        request = self.request
        if request.as_of is not None:
            landing = SnapshotLanding(planner, config, request.as_of, request.snapshot_file)
            planner.check_unique_values(landing.plan)
            return TableJob(config, landing.run)
        plan = planner.plan(config)
        planner.check_unique_values(plan)
        refresh = request.full_refresh and self._catalog_reads == 1
        return TableJob(
            config, lambda observer: sync_table(planner.context, plan, observer, refresh), None if refresh else plan
        )

    def _sync(self, job: TableJob, observer: ConsoleObserver) -> TableReport:
        try:
            result = job.run(observer)
            return TableReport(job.config.key, "unchanged" if result is None else "landed", result)
        except Exception as exc:  # one table's failure must not stop the others
            message = shown_error(exc, self.request.verbose)  # a key value only with --verbose
            if self.request.verbose:
                print(mask("".join(traceback.format_exception(exc))), file=sys.stderr)
            print(f"error: {about_table(job.config.key, message)}", file=sys.stderr)
            return TableReport(job.config.key, "failed", error=message)

    def _finish(self, summary: list[TableReport], replicas: dict[str, TargetNames]) -> Outcome:
        """dbt merges the pass's tables that landed, and those an earlier merge left waiting; a table that
        failed has nothing waiting."""
        dbt, tables = self.dbt, len(replicas)
        dbt_ok, dbt_report = None, None
        if dbt is not None:
            landed = [entry.table for entry in summary if entry.status == "landed"]
            models = models_to_merge(self.settings.target, self.settings.state_schema, replicas, landed)
            dbt_ok = dbt.run(quiet=self.request.quiet, stdout_is_data=self.request.json, models=models)
            dbt_report = DbtReport(dbt.ran_with or dbt.args, dbt_ok, dbt.failure, int(dbt.ran_with is not None))
            if dbt_ok and self._planned is not None:
                prime(self.settings, *self._planned, [entry.result for entry in summary])
        report = PassReport(summary, dict(self._catalog), dbt_report)
        failed = report.failed
        if dbt is not None and dbt_ok is False:
            said = f"dbt {' '.join(dbt.requested)} failed ({dbt.failure}); what landed waits for the next merge"
            print(said, file=sys.stderr)
        unread = [f for entry in summary for f in getattr(entry.result, "failed_files", [])]
        if unread:
            print(f"{len(unread)} file(s) could not be read; the next run reads them again", file=sys.stderr)
        if failed:
            print(f"{len(failed)} of {tables} table(s) failed: {', '.join(failed)}", file=sys.stderr)
        if failed or unread:
            return Outcome(report, EXIT_TABLE_FAILED)
        if dbt_ok is False:
            return Outcome(report, EXIT_DBT_FAILED)
        return Outcome(report, EXIT_OK)
