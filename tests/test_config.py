"""URLs, seeds, names and the type map, without a database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extract.config.naming import target_names
from extract.config.settings import load_settings
from extract.config.urls import JTDS_DRIVER, SQLSERVER_DRIVER, parse_url
from extract.source.catalog import SourceColumn, SourceTable, column_from_type_text
from extract.source.typemap import TypeMap
from tests.conftest import DATASETS, REPO

SCHEMA_JSON = DATASETS / "adventureworks" / "schema.json"


def test_sqlserver_url_forms() -> None:
    url = parse_url("jdbc:sqlserver://SQLPROD01:1433;databaseName=Sales;encrypt=true;user=etl;password=s3cret")
    assert (url.host, url.port, url.database, url.user, url.driver_class) == (
        "SQLPROD01",
        1433,
        "Sales",
        "etl",
        SQLSERVER_DRIVER,
    )
    assert "s3cret" not in url.jdbc_url and "s3cret" not in url.display and "s3cret" not in repr(url)
    assert url.jdbc_url == "jdbc:sqlserver://SQLPROD01:1433;encrypt=true;loginTimeout=10;databaseName=Sales"
    jtds = parse_url("jdbc:jtds:sqlserver://db01/AdventureWorks;instance=SQLEXPRESS")
    assert (jtds.database, jtds.port, jtds.driver_class) == ("AdventureWorks", 1433, JTDS_DRIVER)
    assert jtds.jdbc_url == "jdbc:jtds:sqlserver://db01:1433/AdventureWorks;instance=SQLEXPRESS;loginTimeout=10"


def test_postgres_url_forms() -> None:
    url = parse_url("postgresql://me:p%40ss@127.0.0.1:5433/src")
    assert (url.user, url.password, url.port, url.database) == ("me", "p@ss", 5433, "src")
    assert url.jdbc_url == "jdbc:postgresql://127.0.0.1:5433/src?prepareThreshold=-1&connectTimeout=10"
    assert parse_url("jdbc:postgresql://h/db?sslmode=require").jdbc_url == (
        "jdbc:postgresql://h:5432/db?sslmode=require&prepareThreshold=-1&connectTimeout=10"
    )
    assert (
        parse_url("jdbc:postgresql://h/db?prepareThreshold=5").jdbc_url
        == "jdbc:postgresql://h:5432/db?prepareThreshold=5&connectTimeout=10"
    )


def test_credentials_from_the_environment_win() -> None:
    settings = load_settings(
        {
            "TIDEMARK_SOURCE_URL": "jdbc:sqlserver://db01;databaseName=App",
            "TIDEMARK_SOURCE_USER": "reader",
            "TIDEMARK_SOURCE_PASSWORD": "from-env",
            "TIDEMARK_TARGET_HOST": "pg01",
            "TIDEMARK_TARGET_DBNAME": "replicas",
        }
    )
    assert settings.source.jdbc_properties()["password"] == "from-env"
    assert settings.target.display == "postgres://pg01:5432/replicas"
    assert settings.cursor_candidates[0] == "ModifiedDate"


def test_replica_schema_uses_host_alias_and_folds_names() -> None:
    url = parse_url("jdbc:sqlserver://SQLPROD01:1433;databaseName=AdventureWorks")
    names = target_names(url, {"sqlprod01": "prod"}, "Sales", "SalesOrderHeader")
    assert (names.schema, names.table, names.staging_table) == (
        "prod__adventureworks__sales",
        "salesorderheader",
        "stg__salesorderheader",
    )
    other = target_names(parse_url("jdbc:sqlserver://10.1.2.3;databaseName=X"), {}, "dbo", "T")
    assert other.schema == "10_1_2_3__x__dbo"


def _mssql_column(text: str) -> SourceColumn:
    return column_from_type_text("c", text, True, 1)


def test_type_map_covers_every_adventureworks_type() -> None:
    tables = json.loads(SCHEMA_JSON.read_text())["tables"]
    types = sorted({c["mssql_type"] for t in tables for c in t["columns"]})
    assert len(types) > 30
    type_map = TypeMap(REPO / "seeds")
    table = SourceTable("dbo", "t", (), ("c",))
    mapped = {t: type_map.map_column("sqlserver", table, _mssql_column(t)).target_type for t in types}
    assert mapped["nvarchar(50)"] == "varchar(50)"
    assert mapped["nchar(3)"] == "char(3)"
    assert mapped["money"] == "numeric(19,4)"
    assert mapped["decimal(8,2)"] == "numeric(8,2)"
    assert mapped["uniqueidentifier"] == "uuid"
    assert mapped["varbinary(max)"] == "bytea"
    assert mapped["nvarchar(max)"] == "text"
    assert mapped["time(7)"] == "time(6)"


@pytest.mark.parametrize(
    "text", ["datetime2(7)", "datetimeoffset(7)", "bit", "tinyint", "xml", "hierarchyid", "geography", "timestamp"]
)
def test_type_map_covers_more_sqlserver_types(text: str) -> None:
    type_map = TypeMap(REPO / "seeds")
    assert type_map.map_column("sqlserver", SourceTable("dbo", "t", (), ()), _mssql_column(text)).target_type


def test_every_seed_parses(tmp_path: Path) -> None:
    from extract.config.seeds import read_host_aliases, read_sync_tables

    assert read_host_aliases(REPO / "seeds")["127.0.0.1"] == "demo"
    assert {t.key for t in read_sync_tables(REPO / "seeds")} >= {"dbo.Customers", "dbo.OrderLines"}
