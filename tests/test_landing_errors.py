"""A landing that fails says so in one line (table, partition, column, value, Postgres' words), the same
line the run log keeps; the Java stack trace only with --verbose."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Project
from tests.demo_fixture import demo
from tests.replica_check import assert_replicas_equal

__all__ = ["demo"]


def _logged_error(project: Project, table: str) -> str:
    value = project.scalar(
        "select error_message from _migration.run_log where source_table = %s and status = 'failed'"
        " order by event_id desc limit 1",
        (table,),
    )
    assert value is not None
    return str(value)


def test_a_value_the_target_refuses_is_named_with_its_column(demo: Project, tmp_path: Path) -> None:
    demo.extract("dbo.Customers")
    snapshot = tmp_path / "customers.csv"
    snapshot.write_text(
        "CustomerID,Name,Email,CountryCode,CreditLimit,IsActive,RowGuid,ModifiedDate\n"
        "1,Ann,ann@example.com,AT,abc,true,6f1e9b5e-54a8-4a4a-9c61-0c2b4f4a3f10,2026-01-01 00:00:00\n"
    )
    command = ["--table", "dbo.Customers", "--snapshot-date", "2026-01-01", "--snapshot-file", str(snapshot)]
    result = demo.cli(*command)
    assert result.returncode == 1, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: dbo.Customers:")]
    assert len(errors) == 1, result.stderr[-3000:]
    line = errors[0]
    for needle in ("snap__customers", "partition", "invalid input syntax for type numeric", '"abc"', "creditlimit"):
        assert needle in line, f"{needle!r} not in {line!r}"
    assert "An error occurred while calling" not in result.stderr
    assert "\tat " not in result.stderr  # no Java stack trace without --verbose
    with demo.target() as conn:
        logged = conn.execute(
            "select error_message from _migration.snapshot_log where status = 'failed' order by run_id desc limit 1"
        ).fetchone()
    assert logged is not None and logged[0] == line.removeprefix("error: dbo.Customers: ")

    verbose = demo.cli(*command, "--verbose")
    assert verbose.returncode == 1
    assert "\tat tidemark.landing." in verbose.stderr  # the Java stack trace, asked for


def test_a_column_added_in_the_source_is_followed_and_said(demo: Project) -> None:
    demo.sync()
    with demo.source() as conn:
        conn.execute('alter table dbo."Orders" add column "Channel" text')
        conn.execute(
            """update dbo."Orders" set "Channel" = 'web', "UpdatedAt" = clock_timestamp() at time zone 'UTC'
            where "OrderID" <= 3"""
        )
    result = demo.cli("--table", "dbo.Orders", "--dbt", "build")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "dbo.Orders: schema: column channel added (text); every row read again" in result.stderr
    demo.close()
    assert_replicas_equal(demo)
