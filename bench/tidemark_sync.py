"""tidemark's own syncs of bench.Items in a scratch project: the extract, and the dbt merge in its process."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench.measure import Measured, run

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DBT = str(Path(sys.executable).with_name("dbt"))
SYNC_TABLES = "source_schema,source_table,cursor_column,primary_key,enabled\nbench,Items,,,true\n"
#: The merge without tests and snapshots: the replica model and the state view.
MERGE = "run --select replica state"

_LAST_RUN = """
select r.rows_landed, extract(epoch from r.ended_at - r.started_at)
from _migration.run_log as r
where r.status = 'landed'
order by r.event_id desc
limit 1
"""

_LAST_MERGE = """
select rows_in_batch, rows_inserted, rows_updated, rows_unchanged,
    extract(epoch from merged_at - merge_started_at)
from _migration.merge_log
order by merge_id desc
limit 1
"""


@dataclass(frozen=True)
class Sync:
    #: `python -m extract --table bench.Items --dbt '<MERGE>'`: extract, then dbt in the same process.
    command: Measured
    rows_landed: int
    #: From the run log: clock read, partition planning and landing, without process start-up.
    landing_seconds: float
    rows_in_batch: int
    rows_inserted: int
    rows_updated: int
    rows_unchanged: int
    #: From the merge log: the merge statement inside `dbt run`.
    merge_seconds: float

    @property
    def seconds(self) -> float:
        return self.command.seconds


class TidemarkProject:
    """A scratch copy of the dbt project with one table configured, as a user would set it up."""

    def __init__(self, root: Path, env: dict[str, str], target_url: str, sync_tables: str = SYNC_TABLES) -> None:
        self.root = root
        self.target_url = target_url
        self.env = {
            **env,
            "TIDEMARK_PROJECT_DIR": str(root),
            "DBT_PROFILES_DIR": str(root),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        }
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for name in ("dbt_project.yml", "macros", "seeds", "models/state"):
            source, copy = REPO / name, root / name
            if source.is_dir():
                shutil.copytree(source, copy)
            else:
                shutil.copy(source, copy)
        (root / "snapshots").mkdir()
        shutil.copy(REPO / "profiles.yml.example", root / "profiles.yml")
        (root / "seeds" / "sync_tables.csv").write_text(sync_tables)
        run([PYTHON, "-m", "extract", "generate"], self.env, REPO, "extract generate")
        run([DBT, "seed", "--project-dir", str(root)], self.env, root, "dbt seed")

    def extract(self) -> Measured:
        return run([PYTHON, "-m", "extract", "--table", "bench.Items"], self.env, REPO, "extract")

    def build(self) -> Measured:
        return run([DBT, "build", "--project-dir", str(self.root)], self.env, self.root, "dbt build")

    def replica(self) -> tuple[str, str]:
        """(schema, table) of the replica, as the run log names it."""
        with psycopg.connect(self.target_url) as conn:
            row = conn.execute("select target_schema, target_table from _migration.run_log limit 1").fetchone()
        assert row is not None, "no run logged yet"
        return str(row[0]), str(row[1])

    def sync(self) -> Sync:
        """One command, as a scheduler would run it: the extract, then the merge (`--dbt`)."""
        command = [PYTHON, "-m", "extract", "--table", "bench.Items", "--dbt", MERGE]
        synced = run(command, self.env, REPO, "extract --dbt")
        with psycopg.connect(self.target_url) as conn:
            landed = conn.execute(_LAST_RUN).fetchone()
            logged = conn.execute(_LAST_MERGE).fetchone()
        assert landed is not None and logged is not None, "the sync left no run or merge in the logs"
        return Sync(
            command=synced,
            rows_landed=int(landed[0]),
            landing_seconds=float(landed[1]),
            rows_in_batch=int(logged[0]),
            rows_inserted=int(logged[1]),
            rows_updated=int(logged[2]),
            rows_unchanged=int(logged[3]),
            merge_seconds=float(logged[4]),
        )
