"""With a state key (TIDEMARK_STATE_KEY), the key values the state keeps (deleted keys, key changes, partition
positions) are stored encrypted: a pg_dump of the state schema holds none in clear, `state` and `status` read
them with the key and say they are encrypted without it, and a wrong key or none is refused. The target is
Debian's PostgreSQL 15, which has pgcrypto; the source stays on the embedded server."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from extract.core.state_key import with_session_option
from extract.state.protection import ENCRYPTED
from tests.conftest import Project, new_project
from tests.debian_postgres import BIN, debian_postgres
from tests.replica_check import assert_replicas_equal

KEY = "correct horse\tbattery staple"
HEADER = "source_schema,source_table,cursor_column,primary_key,enabled,record_id"
#: Keys no other number of the dump spells: the rows', the one moved to a new key, the one deleted.
FIRST, MOVED_TO, DELETED = 987650001, 987659999, 987650040


@pytest.fixture(scope="session")
def pg15_admin_url() -> Iterator[str]:
    with debian_postgres() as url:
        yield url


@pytest.fixture
def keyed(tmp_path: Path, pg_admin_url: str, pg15_admin_url: str, spark: SparkSession) -> Iterator[Project]:
    with new_project(tmp_path / "project", pg_admin_url, spark, target_admin_url=pg15_admin_url) as project:
        # Partitions of 10 rows: the first sync's plan holds key positions.
        project.env.update(TIDEMARK_STATE_KEY=KEY, PARTITION_ROWS="10")
        with project.source() as conn:
            conn.execute("create schema dbo")
            # No cursor: every run reads the table whole, so a run finds the deleted key as well as the moved one.
            conn.execute(
                """create table dbo."Parts" ("Id" integer primary key, rowguid uuid not null unique, "Name" text)"""
            )
            conn.execute(
                """insert into dbo."Parts" select %s + i, gen_random_uuid(), 'part ' || i
                from generate_series(0, 49) as i""",
                (FIRST,),
            )
        project.write_sync_tables(["dbo,Parts,,,true,rowguid"], HEADER)
        project.generate()
        yield project


def _cli(project: Project, *args: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    saved = dict(project.env)
    project.env.update({k: v for k, v in env.items() if v is not None})
    for name in (k for k, v in env.items() if v is None):
        project.env.pop(name, None)
    try:
        return project.cli(*args)
    finally:
        project.env.clear()
        project.env.update(saved)


def _dump(project: Project) -> str:
    done = subprocess.run(
        [str(BIN / "pg_dump"), "--schema=_migration", "--no-owner", project.target_url],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_key_values_are_stored_encrypted_and_read_with_the_key(keyed: Project) -> None:
    keyed.keep_dbt_files()  # searched for key values too
    # tidemark hands the key to the dbt it runs; a plain dbt gets it through PGOPTIONS, as the docs say.
    first = _cli(keyed, "--all", "--dbt", "build")
    assert first.returncode == 0, first.stderr[-3000:]
    with keyed.source() as conn:
        conn.execute('update dbo."Parts" set "Id" = %s where "Id" = %s', (MOVED_TO, FIRST))
        conn.execute('delete from dbo."Parts" where "Id" = %s', (DELETED,))
    keyed.extract()
    # A plain dbt without the key is refused at the first key value it would write, and writes nothing.
    plain = keyed.build(check=False)
    assert plain.returncode == 1, plain.stdout[-3000:]
    assert "keeps key values encrypted: set TIDEMARK_STATE_KEY" in plain.stdout, plain.stdout[-3000:]
    assert keyed.scalar("select count(*) from _migration.delete_log") == 0
    assert keyed.scalar("select count(*) from _migration.key_change_log") == 0
    keyed.env["PGOPTIONS"] = with_session_option(os.environ.get("PGOPTIONS"), KEY)
    keyed.build()
    del keyed.env["PGOPTIONS"]
    assert_replicas_equal(keyed)

    shown = _cli(keyed, "state", "show", "dbo.Parts", "--verbose", "--json")
    assert shown.returncode == 0, shown.stderr[-3000:]
    values = json.loads(shown.stdout)["key_values"]
    assert [row["key"] for row in values["deleted_keys"]] == [{"id": DELETED}]
    assert [(row["old_key"], row["new_key"]) for row in values["key_changes"]] == [({"id": FIRST}, {"id": MOVED_TO})]
    ends = [p[end] for p in values["partitions"] for end in ("start_position", "end_position")]
    cut_at = sorted({int(key) for position in ends if position for key in json.loads(position)})
    assert len(cut_at) >= 4  # 49 rows in partitions of 10
    status = _cli(keyed, "status", "--verbose", "--json")
    assert status.returncode == 0, status.stderr[-3000:]
    assert "partition_positions" in json.loads(status.stdout)["tables"][0]

    dump = _dump(keyed)
    assert "tidemark:pgp:" in dump
    for value in (FIRST, MOVED_TO, DELETED, *cut_at):  # keys, and the positions of the first sync's plan
        assert str(value) not in dump
    assert KEY not in dump and "battery" not in dump
    dbt_logs = "".join(path.read_text(errors="replace") for path in (keyed.root / "logs").glob("dbt.log*"))
    assert "Running with dbt=" in dbt_logs
    assert all(str(value) not in dbt_logs for value in (FIRST, MOVED_TO, DELETED)), "a key value in dbt's log"

    hidden = _cli(keyed, "state", "show", "dbo.Parts", "--verbose", "--json", TIDEMARK_STATE_KEY=None)
    assert hidden.returncode == 0, hidden.stderr[-3000:]
    hidden_values = json.loads(hidden.stdout)["key_values"]
    assert hidden_values["deleted_keys"][0]["key"] == ENCRYPTED
    hidden_status = _cli(keyed, "status", "--verbose", "--json", TIDEMARK_STATE_KEY=None)
    assert hidden_status.returncode == 0, hidden_status.stderr[-3000:]
    assert "partition_positions" in json.loads(hidden_status.stdout)["tables"][0]
    without = _cli(keyed, "--all", TIDEMARK_STATE_KEY=None)
    assert without.returncode == 2 and "set TIDEMARK_STATE_KEY" in without.stderr, without.stderr[-3000:]
    wrong = _cli(keyed, "--all", TIDEMARK_STATE_KEY="wrong-key-42")
    assert wrong.returncode == 2 and "TIDEMARK_STATE_KEY is not the key" in wrong.stderr, wrong.stderr[-3000:]
    assert "wrong-key-42" not in wrong.stderr
