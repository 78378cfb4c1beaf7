"""Run the checkpoint: the source's figures go in as suite parameters, results are stored in
`gx/uncommitted/validations/` and Data Docs rebuilt; each replica's outcome comes back."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
from great_expectations.core.run_identifier import RunIdentifier

from extract.config.environment import browser_assets
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.project.verify import source_figures
from extract.quality.docs_offline import localize_site
from extract.quality.gx_project import docs_index, open_project, prepare_checkpoint
from extract.quality.suites import gx_name, is_generated, parameter_names
from extract.source.dialects.postgres import PostgresDialect

_TARGET = PostgresDialect()


@dataclass(frozen=True)
class ExpectationOutcome:
    expectation: str
    column: str | None
    success: bool
    observed: Any
    generated: bool


@dataclass(frozen=True)
class TableCheck:
    table: str
    replica: str
    suite: str
    success: bool
    expectations: tuple[ExpectationOutcome, ...]


def _outcome(result: Any) -> ExpectationOutcome:
    config = result.expectation_config
    observed = (result.result or {}).get("observed_value")
    if observed is None and "unexpected_count" in (result.result or {}):
        observed = f"{result.result['unexpected_count']} unexpected"
    if result.exception_info and result.exception_info.get("raised_exception"):
        observed = result.exception_info.get("exception_message")
    return ExpectationOutcome(
        expectation=config.type,
        column=config.kwargs.get("column"),
        success=bool(result.success),
        observed=observed,
        generated=is_generated(config.meta),
    )


def _missing_replicas(planner: Planner, plans: Sequence[TablePlan]) -> set[str]:
    """Replicas not in the target yet: GX cannot make an asset of a table that does not exist."""
    missing = set()
    with psycopg.connect(planner.settings.target.libpq_url, autocommit=True) as target:
        for plan in plans:
            name = _TARGET.table_ref(plan.names.schema, plan.names.table)
            found = target.execute("select to_regclass(%s) is not null", (name,)).fetchone()
            if not (found and found[0]):
                missing.add(plan.names.table_key)
    return missing


def _not_replicated(plan: TablePlan) -> TableCheck:
    missing = ExpectationOutcome("replica_exists", None, False, "no replica: sync the table first", True)
    return TableCheck(plan.config.key, plan.names.table_key, gx_name(plan.names.table_key), False, (missing,))


def run_checkpoint(planner: Planner, plans: Sequence[TablePlan], max_age_seconds: float) -> list[TableCheck]:
    missing = _missing_replicas(planner, plans)
    present = [p for p in plans if p.names.table_key not in missing]
    checked = {c.replica: c for c in _validate(planner, present, max_age_seconds)} if present else {}
    return [checked.get(p.names.table_key) or _not_replicated(p) for p in plans]


def _validate(planner: Planner, plans: Sequence[TablePlan], max_age_seconds: float) -> list[TableCheck]:
    context = open_project(planner.settings)
    checkpoint = prepare_checkpoint(context, plans, max_age_seconds)
    parameters: dict[str, Any] = {}
    for plan in plans:
        rows, checksum = source_figures(planner, plan)
        rows_name, checksum_name = parameter_names(plan.names.table_key)
        parameters[rows_name], parameters[checksum_name] = rows, checksum
    now = datetime.now(UTC)
    # A margin: a file's time comes from the kernel's coarse clock, a little behind time.time().
    started = time.time() - 2
    outcome = checkpoint.run(
        expectation_parameters=parameters, run_id=RunIdentifier(run_name="tidemark check", run_time=now)
    )
    problem = localize_site(docs_index(planner.settings).parent, browser_assets(), started)
    if problem:
        print(f"warning: {problem}", file=sys.stderr)
    by_suite = {result.suite_name: result for result in outcome.run_results.values()}
    checks = []
    for plan in plans:
        suite = gx_name(plan.names.table_key)
        result = by_suite[suite]
        checks.append(
            TableCheck(
                table=plan.config.key,
                replica=plan.names.table_key,
                suite=suite,
                success=bool(result.success),
                expectations=tuple(_outcome(r) for r in result.results),
            )
        )
    return checks
