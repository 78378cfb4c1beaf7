"""A project of two tables, one of which always fails to land: `dbo.Items`, and a table keyed (by the
seed) on a column whose values repeat, so that its batch is refused and its run fails with an error
that names it. For the tests of what people and schedulers see of runs."""

from __future__ import annotations

from psycopg import sql

from tests.conftest import Project

HEADER = "source_schema,source_table,cursor_column,primary_key,enabled"
NOW = "clock_timestamp() at time zone 'UTC'"


def items_and_failing(project: Project, failing: str = "Dupes", rows: int = 10) -> None:
    with project.source() as conn:
        conn.execute("create schema dbo")
        for table in ("Items", failing):
            name = sql.Identifier("dbo", table)
            columns = '("Id" integer primary key, "Name" text, "ModifiedDate" timestamp(3))'
            conn.execute(sql.SQL("create table {} " + columns).format(name))
            conn.execute(
                sql.SQL(
                    f"insert into {{}} select i, 'name ' || (i %% 5), {NOW} from generate_series(1, %s) as i"
                ).format(name),
                (rows,),
            )
    project.write_sync_tables(["dbo,Items,ModifiedDate,,true", f"dbo,{failing},ModifiedDate,Name,true"], HEADER)
    project.generate()
