"""Independent check that a replica equals its source, row for row and column for column."""

from __future__ import annotations

from psycopg import sql

from tests.conftest import Project


def rows_of(conn_url: str, schema: str, table: str, columns: list[str], key: list[str]) -> list[tuple[object, ...]]:
    import psycopg

    query = sql.SQL("select {} from {}.{} order by {}").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.Identifier(schema),
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, key)),
    )
    with psycopg.connect(conn_url) as conn:
        return conn.execute(query).fetchall()


def assert_replicas_equal(project: Project) -> int:
    """Compare every enabled table; returns the number of rows compared."""
    compared = 0
    for config in project.planner.enabled_tables():
        plan = project.planner.plan(config)
        source_cols = [c.source.name for c in plan.columns]
        target_cols = [c.target_name for c in plan.columns]
        source = rows_of(
            project.source_url, plan.table.schema, plan.table.name, source_cols, list(plan.table.primary_key)
        )
        replica = rows_of(project.target_url, plan.names.schema, plan.names.table, target_cols, plan.key_columns)
        assert len(replica) == len(source), f"{config.key}: {len(source)} source rows, {len(replica)} in the replica"
        for src_row, rep_row in zip(source, replica, strict=True):
            assert src_row == rep_row, f"{config.key}: source {src_row} != replica {rep_row}"
        compared += len(source)
    return compared
