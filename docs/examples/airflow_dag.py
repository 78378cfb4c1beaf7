"""An Airflow DAG that syncs every configured table every 15 minutes and reconciles them nightly.

Needs Airflow 2.7 or newer, tidemark installed where the task runs (`pip install ./tidemark`), and
TIDEMARK_* variables in the worker's environment (the secrets from your secret backend). Each task
calls the CLI and reads its JSON (tidemark_run.py); a failed table fails the task, with its error."""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.decorators import dag, task
from tidemark_run import run_tidemark, summary


@dag(schedule=timedelta(minutes=15), start_date=datetime(2026, 1, 1), catchup=False, max_active_runs=1)
def tidemark_sync():
    @task
    def sync() -> dict:
        return summary(run_tidemark(["--all", "--dbt", "build"]))

    sync()


@dag(schedule="0 2 * * *", start_date=datetime(2026, 1, 1), catchup=False, max_active_runs=1)
def tidemark_reconcile():
    @task
    def reconcile() -> dict:
        report = run_tidemark(["reconcile", "--all", "--dbt", "build"])
        return {t["table"]: {k: t[k] for k in ("inserted", "updated", "deleted")} for t in report["tables"]}

    reconcile()


tidemark_sync()
tidemark_reconcile()
