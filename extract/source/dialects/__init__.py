"""Everything that differs between source databases stays behind `Dialect`."""

from __future__ import annotations

from extract.core.errors import TidemarkError
from extract.source.dialects.base import Dialect
from extract.source.dialects.postgres import PostgresDialect
from extract.source.dialects.tsql import TsqlDialect

__all__ = ["Dialect", "PostgresDialect", "TsqlDialect", "dialect_for"]


def dialect_for(name: str) -> Dialect:
    if name == "sqlserver":
        return TsqlDialect()
    if name == "postgres":
        return PostgresDialect()
    raise TidemarkError(f"unknown source dialect {name!r}: expected 'sqlserver' or 'postgres'")
