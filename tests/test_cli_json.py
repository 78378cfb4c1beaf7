"""`python -m extract --all --json`: a summary an orchestrator can read, and exit codes that tell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def test_json_summary_and_exit_code_when_one_table_fails(demo: Project) -> None:
    # A key the source does not enforce, held twice: the run fails while landing, the others land.
    with demo.source() as conn:
        conn.execute('create table dbo."Events" ("Id" integer, "Payload" text)')
        conn.execute("""insert into dbo."Events" values (1, 'a'), (1, 'again')""")
    seed = demo.root / "seeds" / "sync_tables.csv"
    seed.write_text(seed.read_text() + "dbo,Events,,Id,true\n")
    result = demo.cli("--all", "--json")
    assert result.returncode == 1, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    by_table = {entry["table"]: entry for entry in summary["tables"]}
    assert summary["failed"] == 1, result.stdout + result.stderr[-3000:]
    assert by_table["dbo.Events"]["status"] == "failed"
    assert "dbo.Events: the batch holds a key (--verbose shows it) more than once" in by_table["dbo.Events"]["error"]
    assert "Id=1" not in result.stdout + result.stderr  # no key value without --verbose
    landed = {t: e for t, e in by_table.items() if e["status"] == "landed"}
    assert set(landed) == {"dbo.Countries", "dbo.Customers", "dbo.Products", "dbo.Orders", "dbo.OrderLines"}
    assert landed["dbo.Customers"]["rows_landed"] == 60
    assert landed["dbo.Customers"]["migration_type"] == "full"
    assert landed["dbo.Customers"]["watermark_candidate"]
    assert "1 of 6 table(s) failed: dbo.Events" in result.stderr
    shown = demo.cli("--table", "dbo.Events", "--verbose")
    assert shown.returncode == 1
    assert "error: dbo.Events: the batch holds the key (Id=1) more than once" in shown.stderr, shown.stderr[-3000:]
    assert "Id=1" not in str(demo.scalar("select string_agg(error_message, ' ') from _migration.runs"))


def test_a_configuration_error_in_one_table_stops_every_table_before_anything_lands(demo: Project) -> None:
    seed = demo.root / "seeds" / "sync_tables.csv"
    seed.write_text(seed.read_text() + "dbo,Vanished,,,true\n")
    result = demo.cli("--all", "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "error: unknown table 'dbo.Vanished'" in result.stderr
    assert demo.scalar("select count(*) from pg_namespace where nspname = '_migration'") == 0


def _jars(extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "extract", "jars", "--separator", ":"],
        cwd=REPO,
        env={**os.environ, "TIDEMARK_JARS": extra},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_jars_lists_the_landing_jar_and_drivers_for_spark_submit(tmp_path: Path) -> None:
    driver = tmp_path / "mssql-jdbc.jar"
    driver.write_bytes(b"PK")
    result = _jars(str(driver))
    assert result.returncode == 0, result.stderr
    jars = result.stdout.strip().split(":")
    assert "tidemark-landing-" in jars[0] and jars[0].endswith(".jar")
    assert "/usr/share/java/postgresql.jar" in jars and jars[-1] == str(driver)
    assert all(Path(jar).exists() for jar in jars)

    missing = _jars(f"{driver}:/nonexistent/other.jar")
    assert missing.returncode == 2
    assert "TIDEMARK_JARS names a jar that does not exist: /nonexistent/other.jar" in missing.stderr
