"""great-expectations row-count checks: each replica has as many rows as its source table."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def main_module_named() -> Iterator[None]:
    """great_expectations imports pyspark.sql.connect, which takes a __main__ without a spec
    or a file (``python -c``, a pytest-xdist worker, some schedulers' workers) for a doctest
    run and exits the process with status 0; a name for __main__ during the import avoids it."""
    main = sys.modules["__main__"]
    unnamed = getattr(main, "__spec__", None) is None and not hasattr(main, "__file__")
    if unnamed:
        main.__file__ = "<tidemark>"
    try:
        yield
    finally:
        if unnamed:
            del main.__file__


def run_count_checks(planner: Planner, plans: list[TablePlan], target: DatabaseUrl) -> list[CountCheck]:
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    with main_module_named():
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig
        from great_expectations.expectations.core.expect_table_row_count_to_equal import (
            ExpectTableRowCountToEqual,
        )

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
