"""Passwords never reach a message, a log or a file: in every form a URL can hold one, through a sync
whose one table fails while landing and whose dbt run fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from extract.core.secrets import mask, register
from tests.conftest import REPO, Project
from tests.demo_fixture import demo, refuse_credit_limit_change

__all__ = ["demo"]

PASSWORD = "Pw#1@/x;{y}}z"


@pytest.mark.parametrize(
    "text",
    [
        f"postgresql://me:{PASSWORD}@db01:5432/app",
        f"postgres://me:{PASSWORD}@db01/app?sslmode=require",
        f"jdbc:postgresql://db01/app?user=me&password={PASSWORD}",
        "jdbc:sqlserver://db01:1433;databaseName=App;user=me;password={" + PASSWORD.replace("}", "}}") + "}",
        f"jdbc:sqlserver://db01:1433;databaseName=App;password={PASSWORD.split(';')[0]};encrypt=true",
        f"jdbc:jtds:sqlserver://db01/App;user=me;password={PASSWORD.split(';')[0]}",
        f"host=db01 password={PASSWORD.split(';')[0]} dbname=app",
    ],
)
def test_every_url_form_is_masked(text: str) -> None:
    masked = mask(text)
    assert "***" in masked
    assert PASSWORD.split(";")[0] not in masked and "Pw#1" not in masked


def test_a_registered_secret_is_masked_anywhere() -> None:
    register("correct horse battery")
    assert mask("connection refused for correct horse battery at db01") == "connection refused for *** at db01"


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [
        path
        for path in root.rglob("*")
        if path.is_file() and path.suffix != ".jsa" and secret.encode() in path.read_bytes()
    ]


def test_no_password_in_any_output_of_a_failing_sync(demo: Project) -> None:
    demo.keep_dbt_files()  # searched for the password too
    with demo.source() as conn:  # a table that fails while landing: its override key repeats
        conn.execute('create table dbo."Events" ("Id" integer, "Payload" text)')
        conn.execute("""insert into dbo."Events" values (1, 'a'), (1, 'again')""")
    seed = demo.root / "seeds" / "sync_tables.csv"
    seed.write_text(seed.read_text() + "dbo,Events,,Id,true\n")
    demo.generate()
    demo.sync()
    refuse_credit_limit_change(demo, customer=3)  # and a merge that fails
    host_port = demo.target_url.split("@", 1)[1].rsplit("/", 1)[0]
    env = {
        **os.environ,
        **demo.env,
        # The stand-in servers trust local users: a password is sent, and never checked.
        "TIDEMARK_TARGET_URL": f"postgresql://postgres:{PASSWORD}@{host_port}/{demo.target_db}",
        "TIDEMARK_TARGET_PASSWORD": PASSWORD,
        "TIDEMARK_SOURCE_URL": f"jdbc:postgresql://{host_port}/{demo.source_db}?user=postgres&password={PASSWORD}",
        "DBT_PROFILES_DIR": str(demo.root),
        "TIDEMARK_TARGET_USER": "postgres",
    }
    result = subprocess.run(
        [sys.executable, "-m", "extract", "--all", "--dbt", "build", "--verbose", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    assert "error: dbo.Events:" in result.stderr
    assert "dbt build failed (" in result.stderr
    for part in (PASSWORD, "Pw#1"):
        assert part not in result.stdout and part not in result.stderr
    with demo.target() as conn:
        logged = conn.execute("select string_agg(t::text, ' ') from _migration.run_log as t").fetchone()
        merged = conn.execute("select string_agg(t::text, ' ') from _migration.merge_log as t").fetchone()
    assert logged is not None and "Pw#1" not in str(logged[0]) and "Pw#1" not in str(merged)
    assert _files_holding(demo.root, "Pw#1") == []  # dbt's logs and run results included
    assert (demo.root / "logs" / "dbt.log").exists() and (demo.root / "target" / "run_results.json").exists()
