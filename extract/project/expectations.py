"""great-expectations row-count checks: each replica has as many rows as its source table."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from extract.config.urls import DatabaseUrl
from extract.planning.planner import Planner
from extract.planning.table_plan import TablePlan


@dataclass(frozen=True)
class CountCheck:
    table: str
    replica: str
    source_rows: int
    replica_rows: int | None
    success: bool


def source_count(planner: Planner, plan: TablePlan) -> int:
    rows = planner.source.query(planner.dialect.row_count_query(plan.table.schema, plan.table.name))
    return int(rows[0][0] or 0)


def run_count_checks(planner: Planner, plans: list[TablePlan], target: DatabaseUrl) -> list[CountCheck]:
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.expectations.core.expect_table_row_count_to_equal import ExpectTableRowCountToEqual

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    datasource = context.data_sources.add_postgres(
        name="tidemark_target", connection_string=target.libpq_url.replace("postgresql://", "postgresql+psycopg2://", 1)
    )
    results = []
    for plan in plans:
        expected = source_count(planner, plan)
        asset = datasource.add_table_asset(
            name=plan.names.table_key, table_name=plan.names.table, schema_name=plan.names.schema
        )
        batch = asset.add_batch_definition_whole_table("whole table").get_batch()
        outcome = batch.validate(ExpectTableRowCountToEqual(value=expected))
        observed = outcome.result.get("observed_value")
        results.append(CountCheck(plan.config.key, plan.names.table_key, expected, observed, bool(outcome.success)))
    return results
