"""The expectation suite of each replica, generated from its plan (seed and catalog).

Generated expectations carry `meta.generated_by = tidemark`; each check replaces those and keeps
every other expectation in the suite, so a user's own expectations survive regeneration."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import great_expectations as gx
from great_expectations.exceptions.exceptions import DataContextError
from great_expectations.expectations.core.expect_column_values_to_be_unique import ExpectColumnValuesToBeUnique
from great_expectations.expectations.core.expect_column_values_to_not_be_null import ExpectColumnValuesToNotBeNull
from great_expectations.expectations.core.expect_compound_columns_to_be_unique import ExpectCompoundColumnsToBeUnique
from great_expectations.expectations.core.expect_table_row_count_to_equal import ExpectTableRowCountToEqual
from great_expectations.expectations.expectation import Expectation

from extract.planning.table_plan import TablePlan
from extract.project.verify import kind_of
from extract.quality.custom_expectations import ExpectCommittedWatermarkToBeRecent, ExpectReplicaContentToMatchSource

GENERATED_BY = "tidemark"


def _digest(table_key: str) -> str:
    return hashlib.sha256(table_key.encode()).hexdigest()[:12]


def gx_name(table_key: str) -> str:
    """The name of a replica's suite, asset and validation definition. GX files its objects by name
    (a dot opens a folder), so names from the source catalog are reduced to [a-z0-9_] and told
    apart by a digest."""
    slug = re.sub(r"[^a-z0-9]+", "_", table_key.lower()).strip("_")[:60]
    return f"{slug}_{_digest(table_key)}"


def parameter_names(table_key: str) -> tuple[str, str]:
    """The suite parameters that carry the source's row count and checksum into a checkpoint run."""
    return f"source_rows_{_digest(table_key)}", f"source_checksum_{_digest(table_key)}"


def generated_expectations(plan: TablePlan, max_age_seconds: float) -> list[Expectation]:
    rows, checksum = parameter_names(plan.names.table_key)
    keys = plan.key_columns
    expectations: list[Expectation] = [ExpectTableRowCountToEqual(value={"$PARAMETER": rows})]
    expectations += [ExpectColumnValuesToNotBeNull(column=key) for key in keys]
    if len(keys) == 1:
        expectations.append(ExpectColumnValuesToBeUnique(column=keys[0]))
    elif keys:
        expectations.append(ExpectCompoundColumnsToBeUnique(column_list=keys))
    expectations.append(
        ExpectCommittedWatermarkToBeRecent(
            table_key=plan.names.table_key, max_age_seconds=max_age_seconds, state_schema=plan.state.name
        )
    )
    canonical: list[list[Any]] = [[c.target_name, *kind_of(c.target_type)] for c in plan.columns]
    expectations.append(
        ExpectReplicaContentToMatchSource(
            canonical_columns=canonical, source_rows={"$PARAMETER": rows}, source_checksum={"$PARAMETER": checksum}
        )
    )
    for expectation in expectations:
        expectation.meta = {"generated_by": GENERATED_BY}
    return expectations


def is_generated(meta: dict[str, Any] | None) -> bool:
    """Whether an expectation with this meta is tidemark's, rewritten at each check."""
    return (meta or {}).get("generated_by") == GENERATED_BY


def regenerate_suite(context: Any, plan: TablePlan, max_age_seconds: float) -> Any:
    name = gx_name(plan.names.table_key)
    try:
        suite = context.suites.get(name)
    except DataContextError:
        suite = context.suites.add(gx.ExpectationSuite(name=name, meta={"replica": plan.names.table_key}))
    own = [e for e in suite.expectations if not is_generated(e.meta)]
    suite.expectations = generated_expectations(plan, max_age_seconds) + own
    suite.save()
    return suite
