"""Run the checkpoint: the source's figures go in as suite parameters, results are stored in
`gx/uncommitted/validations/` and Data Docs rebuilt; each replica's outcome comes back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from great_expectations.core.run_identifier import RunIdentifier

from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan
from extract.project.verify import source_figures
from extract.quality.gx_project import open_project, prepare_checkpoint
from extract.quality.suites import gx_name, parameter_names


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
        generated=(config.meta or {}).get("generated_by") == "tidemark",
    )


def run_checkpoint(planner: Planner, plans: Sequence[TablePlan], max_age_seconds: float) -> list[TableCheck]:
    context = open_project(planner.settings)
    checkpoint = prepare_checkpoint(context, plans, max_age_seconds)
    parameters: dict[str, Any] = {}
    for plan in plans:
        rows, checksum = source_figures(planner, plan)
        rows_name, checksum_name = parameter_names(plan.names.table_key)
        parameters[rows_name], parameters[checksum_name] = rows, checksum
    now = datetime.now(UTC)
    outcome = checkpoint.run(
        expectation_parameters=parameters, run_id=RunIdentifier(run_name="tidemark check", run_time=now)
    )
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
