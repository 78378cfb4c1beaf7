"""The file-backed GX project beside the dbt project (`gx/`): data sources, one table asset,
suite and validation definition per replica, and the checkpoint `tidemark` with Data Docs.

Connection strings live in great_expectations.yml only as ${TIDEMARK_GX_TARGET_URL} and
${TIDEMARK_GX_SOURCE_URL}; `check` sets them in its own environment from tidemark's settings, so
no secret is written to the project."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import great_expectations as gx
from great_expectations.checkpoint.actions import UpdateDataDocsAction
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.exceptions.exceptions import DataContextError

from extract.config.environment import hand_on
from extract.config.settings import Settings
from extract.config.urls import DatabaseUrl
from extract.planning.table_plan import TablePlan
from extract.quality.suites import gx_name, regenerate_suite

CHECKPOINT = "tidemark"
TARGET_SOURCE = "tidemark_target"
SOURCE_SOURCE = "tidemark_source"
_URL_VARIABLES = {TARGET_SOURCE: "TIDEMARK_GX_TARGET_URL", SOURCE_SOURCE: "TIDEMARK_GX_SOURCE_URL"}
WHOLE_TABLE = "whole table"


def _sqlalchemy_url(url: DatabaseUrl) -> str:
    return url.libpq_url.replace("postgresql://", "postgresql+psycopg2://", 1)


def open_project(settings: Settings) -> Any:
    """The GX context of the project (created on first use), with its data sources."""
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    reachable = {TARGET_SOURCE: settings.target}
    if settings.source.dialect == "postgres":
        # GX has no driver for SQL Server here; a Postgres source (the stand-in) it can read.
        reachable[SOURCE_SOURCE] = settings.source
    hand_on({_URL_VARIABLES[name]: _sqlalchemy_url(url) for name, url in reachable.items()})
    context = gx.get_context(mode="file", project_root_dir=str(settings.gx_root))
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    existing = {source.name for source in context.data_sources.all().values()}
    for name in reachable:
        if name not in existing:
            # Kept as written once: a user's own assets on these sources stay.
            context.data_sources.add_postgres(name=name, connection_string="${" + _URL_VARIABLES[name] + "}")
    return context


def docs_index(settings: Settings) -> Path:
    return settings.gx_root / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"


def _batch_definition(context: Any, plan: TablePlan) -> Any:
    target = context.data_sources.get(TARGET_SOURCE)
    name = gx_name(plan.names.table_key)
    try:
        asset = target.get_asset(name)
    except LookupError:
        asset = target.add_table_asset(name=name, table_name=plan.names.table, schema_name=plan.names.schema)
    try:
        return asset.get_batch_definition(WHOLE_TABLE)
    except KeyError:
        return asset.add_batch_definition_whole_table(WHOLE_TABLE)


def prepare_checkpoint(context: Any, plans: Sequence[TablePlan], max_age_seconds: float) -> Any:
    """Regenerate the suites of `plans` and point the checkpoint at them."""
    definitions = []
    for plan in plans:
        suite = regenerate_suite(context, plan, max_age_seconds)
        name = gx_name(plan.names.table_key)
        try:
            definition = context.validation_definitions.get(name)
        except DataContextError:
            definition = context.validation_definitions.add(
                gx.ValidationDefinition(name=name, data=_batch_definition(context, plan), suite=suite)
            )
        definitions.append(definition)
    return context.checkpoints.add_or_update(
        gx.Checkpoint(
            name=CHECKPOINT,
            validation_definitions=definitions,
            actions=[UpdateDataDocsAction(name="update_data_docs")],
            result_format={"result_format": "SUMMARY"},
        )
    )
