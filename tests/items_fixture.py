"""A source with one small table, `dbo.Items` (a key, a name, a `ModifiedDate` cursor), configured and
generated in a project: what tests of a pass's mechanics sync when the data does not matter."""

from __future__ import annotations

from tests.conftest import Project

_CREATE = 'create table dbo."Items" ("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3))'


def items_table(project: Project, rows: int, stamped: str = "timestamp '2026-01-01' + i * interval '1 minute'") -> None:
    """`rows` rows, their cursor the SQL expression `stamped` of the row number `i`."""
    with project.source() as conn:
        conn.execute("create schema dbo")
        conn.execute(_CREATE)
        conn.execute(
            f"""insert into dbo."Items" select i, 'item ' || i, {stamped} from generate_series(1, %s) as i""", (rows,)
        )
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true"])
    project.generate()


def items_replica(project: Project) -> str:
    """The replica of `dbo.Items`, quoted."""
    names = project.planner.plan(project.planner.find("dbo.Items")).names
    return f'"{names.schema}"."{names.table}"'
