"""A source with one small table, `dbo.Items` (a key, a name, a `ModifiedDate` cursor), configured and
generated in a project: what tests of a pass's mechanics sync when the data does not matter; and a
table's replica, quoted, for the tests' own SQL."""

from __future__ import annotations

from extract.core.quoting import postgres_identifier
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


def quoted_replica(project: Project, table: str = "dbo.Items") -> str:
    """The replica of `table` (`dbo.Items` unless said), its schema and name quoted for PostgreSQL."""
    names = project.planner.plan(project.planner.find(table)).names
    return f"{postgres_identifier(names.schema)}.{postgres_identifier(names.table)}"
