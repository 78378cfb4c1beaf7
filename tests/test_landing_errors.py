"""A landing that fails says so in one line (table, partition, column, value, Postgres' words), the same
line the run log keeps; the Java stack trace only with --verbose. (A snapshot file with a bad value is
refused whole, before anything is written: tests/test_bad_input_catalogue.py.)"""

from __future__ import annotations

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


def test_a_value_the_target_refuses_is_named_with_its_column(demo: Project) -> None:
    """A value the target's type refuses, met while the executors COPY a partition."""
    with demo.target() as conn:
        conn.execute("create domain public.short_point as text check (length(value) < 5)")
    with demo.source() as conn:
        conn.execute('create table dbo."Spots" ("Id" integer primary key, "Where" point)')
        conn.execute('insert into dbo."Spots" values (1, point(1, 2))')
    type_map = demo.root / "seeds" / "type_map.csv"
    type_map.write_text(type_map.read_text() + "postgres,point,public.short_point,text,\n")
    demo.write_sync_tables(["dbo,Spots,,,true"])
    result = demo.cli("--table", "dbo.Spots")
    assert result.returncode == 1, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: dbo.Spots:")]
    assert len(errors) == 1, result.stderr[-3000:]
    line = errors[0]
    for needle in ("spots", "partition", "short_point", "violates check constraint", '"(1,2)"', "where"):
        assert needle in line, f"{needle!r} not in {line!r}"
    assert "An error occurred while calling" not in result.stderr
    assert "\tat " not in result.stderr  # no Java stack trace without --verbose
    assert _logged_error(demo, "Spots") == line.removeprefix("error: dbo.Spots: ")

    verbose = demo.cli("--table", "dbo.Spots", "--verbose")
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
