"""Tables as SQL Server describes them, planned for a replica: the shapes the T-SQL query checks build
their queries for (a key of every kind, a clock or a modify-id cursor)."""

from __future__ import annotations

from extract.config.naming import TargetNames
from extract.config.seeds import SyncTable
from extract.core.state_schema import StateSchema
from extract.planning.table_plan import TablePlan
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import TsqlDialect
from extract.source.typemap import MappedColumn

DIALECT = TsqlDialect()


def mapped_column(name: str, base: str, target: str, nullable: bool = True) -> MappedColumn:
    return MappedColumn(SourceColumn(name, base, None, None, None, nullable, 1), name.lower(), target, "native")


CURSORS = {
    "clock": mapped_column("ModifiedDate", "datetime2", "timestamp(6)"),
    "modify id": mapped_column("RowVer", "timestamp", "bytea", nullable=False),
}
KEYS = {
    "int": [mapped_column("Id", "int", "integer", False)],
    "text": [mapped_column("Code]x", "nvarchar", "varchar(10)", False)],
    "uuid": [mapped_column("rowguid", "uniqueidentifier", "uuid", False)],
    "composite": [
        mapped_column("OrderId", "int", "integer", False),
        mapped_column("Line", "smallint", "smallint", False),
    ],
}


def plan_of(keys: list[MappedColumn], cursor: MappedColumn) -> TablePlan:
    columns = [
        *keys,
        mapped_column("Amount", "decimal", "numeric(12,2)"),
        mapped_column("Note", "nvarchar", "text"),
        cursor,
    ]
    table = SourceTable("Sales", "Order]s", tuple(c.source for c in columns), tuple(k.source.name for k in keys))
    return TablePlan(
        SyncTable("Sales", "Order]s"), table, columns, cursor.source, TargetNames("s", "orders"), StateSchema()
    )
