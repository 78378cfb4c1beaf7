"""Dagster assets: the replicas, synced by tidemark, with what each run did as metadata.

Needs dagster 1.8 or newer and tidemark installed in the code location's environment; TIDEMARK_*
variables in its environment. The asset calls the CLI and reads its JSON (tidemark_run.py)."""

from __future__ import annotations

from dagster import AssetExecutionContext, Definitions, MaterializeResult, MetadataValue, ScheduleDefinition, asset
from tidemark_run import run_tidemark, summary


@asset(group_name="replicas")
def replicas(context: AssetExecutionContext) -> MaterializeResult:
    """Every configured table, extracted and merged (`tidemark --all --dbt build`)."""
    done = summary(run_tidemark(["--all", "--dbt", "build"]))
    context.log.info(f"rows landed: {done['rows_landed']}")
    return MaterializeResult(
        metadata={
            "rows_landed": MetadataValue.json(done["rows_landed"]),
            "schema_changes": MetadataValue.json(done["schema_changes"]),
            "rows_total": MetadataValue.int(sum(done["rows_landed"].values())),
        }
    )


defs = Definitions(
    assets=[replicas],
    schedules=[ScheduleDefinition(name="replicas_every_15_minutes", target=[replicas], cron_schedule="*/15 * * * *")],
)
