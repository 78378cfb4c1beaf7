"""Everything that differs between source databases stays behind `Dialect`."""

from __future__ import annotations

from extract.dialects.base import Dialect
from extract.dialects.postgres import PostgresDialect
from extract.dialects.tsql import TsqlDialect
from extract.errors import TidemarkError

__all__ = ["Dialect", "PostgresDialect", "TsqlDialect", "dialect_for"]


def dialect_for(name: str) -> Dialect:
    if name == "sqlserver":
        return TsqlDialect()
    if name == "postgres":
        return PostgresDialect()
    raise TidemarkError(f"unknown source dialect {name!r}: expected 'sqlserver' or 'postgres'")
