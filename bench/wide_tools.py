"""tidemark as a tool of the wide section (bench/wide.py): a project syncing every table of the wide schema
by pattern, as a user with many tables configures it, as the README's one command or as the syncs of one
`--every` process."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import psycopg

from bench import wide_source
from bench.measure import Measured
from bench.tidemark_sync import BUILD, SyncLoop, TidemarkProject

SYNC_ALL = ("--all", "--dbt", BUILD)

_LANDED_SINCE = """
select count(distinct (source_schema, source_table))
from _migration.run_log
where status = 'landed' and ended_at >= %s
"""

_REPLICAS = """
select distinct source_table, target_schema, target_table
from _migration.run_log
where source_schema = %s
"""


class Tool(Protocol):
    name: str

    def sync(self) -> Measured: ...

    def table(self, source_table: str) -> tuple[str, str]: ...


def _seed(schema: str) -> str:
    return f"source_schema,source_table,cursor_column,primary_key,enabled\n{schema},*,,,true\n"


class _Tidemark:
    """A project syncing every table of the schema by pattern, as a user with many tables configures it."""

    def __init__(self, root: Path, env: dict[str, str], target_url: str) -> None:
        self.project = TidemarkProject(root, env, target_url, _seed(wide_source.SCHEMA))
        self.target_url = target_url
        self._replicas: dict[str, tuple[str, str]] = {}
        self.landed: list[int] = []

    def _now(self) -> Any:
        with psycopg.connect(self.target_url) as conn:
            row = conn.execute("select clock_timestamp()").fetchone()
        assert row is not None
        return row[0]

    def _count_landed(self, since: Any) -> None:
        with psycopg.connect(self.target_url) as conn:
            row = conn.execute(_LANDED_SINCE, (since,)).fetchone()
        self.landed.append(int(row[0]) if row else 0)

    def table(self, source_table: str) -> tuple[str, str]:
        if not self._replicas:
            with psycopg.connect(self.target_url) as conn:
                rows = conn.execute(_REPLICAS, (wide_source.SCHEMA,)).fetchall()
            self._replicas = {str(table): (str(schema), str(name)) for table, schema, name in rows}
        return self._replicas[source_table]


class TidemarkCommand(_Tidemark):
    name = "tidemark, one command"

    def sync(self) -> Measured:
        since = self._now()
        measured = self.project.command(*SYNC_ALL)
        self._count_landed(since)
        return measured


class TidemarkEvery(_Tidemark):
    """The syncs of one `--every` process, in a target database of its own; its first pass is the process'
    start to its first sync's report."""

    name = "tidemark, --every"

    def __init__(self, root: Path, env: dict[str, str], target_url: str) -> None:
        super().__init__(root, env, target_url)
        self.loop: SyncLoop | None = None

    def sync(self) -> Measured:
        since = self._now()
        if self.loop is None:
            self.loop = SyncLoop(self.project, SYNC_ALL)
            measured = Measured(self.loop.first_seconds, 0, 0, "")
        else:
            measured = self.loop.measured()
        self._count_landed(since)
        return measured

    def stop(self) -> None:
        if self.loop is not None:
            self.loop.stop()
