"""A catalogue of bad input, each given to the command line (`python -m extract ...`, in a process of
its own: tests/cli_runner.py) against a synced project: exit code 2, a first error line that names the
bad value and holds no secret, and nothing changed in either database."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from pyspark.sql import SparkSession

from extract.devtools.demo.generator import create_and_fill
from tests.cli_runner import run_cli
from tests.conftest import REPO, Project, new_project
from tests.target_state import database_state

#: In the environment of every case; the stand-in servers trust local users, so it is never checked.
SECRET = "S3cr3t#;{x}}@/?"


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    needle: str  # what the first error line must name
    env: dict[str, str | None] = field(default_factory=dict)  # None: unset the variable
    #: Seed files rewritten for the case (file name under seeds/ -> its text).
    seeds: dict[str, str] = field(default_factory=dict)
    #: Other files written into the project for the case (path under it -> its text); `{root}` in an
    #: argument is the project's folder.
    files: dict[str, str] = field(default_factory=dict)
    exit_code: int = 2


SYNC_HEADER = "source_schema,source_table,cursor_column,primary_key,enabled\n"
TYPE_MAP = (REPO / "seeds" / "type_map.csv").read_text()


def sync_tables(*rows: str) -> dict[str, str]:
    return {"sync_tables.csv": SYNC_HEADER + "".join(row + "\n" for row in rows)}


def type_map_with(row: str) -> dict[str, str]:
    return {"type_map.csv": TYPE_MAP + row + "\n"}


CUSTOMERS = ["--table", "dbo.Customers"]
SNAPSHOT_HEADER = "CustomerID,Name,Email,CountryCode,CreditLimit,IsActive,RowGuid,ModifiedDate\n"
SNAPSHOT_ROW = "{0},Ann,ann@example.com,AT,100,true,6f1e9b5e-54a8-4a4a-9c61-0c2b4f4a3f1{0},2026-01-01 00:00:00\n"
#: A role that must give a password (SECRET is not it), and one that may read but not create.
LOCKED_ROLE = "catalogue_locked"
READER_ROLE = "catalogue_reader"
CASES = [
    # The command line.
    Case("unknown table", ["--table", "dbo.Nope"], "'dbo.Nope'"),
    Case("table without schema", ["--table", "Customers"], "'Customers'"),
    Case("table given twice", [*CUSTOMERS, *CUSTOMERS], "'dbo.Customers'"),
    Case("--all and --table", ["--all", *CUSTOMERS], "--table"),
    Case("neither --all nor --table", [], "--table"),
    Case("every 0s", ["--all", "--every", "0s"], "'0s'"),
    Case("every too long", ["--all", "--every", "10d"], "'10d'"),
    Case("every not a duration", ["--all", "--every", "soon"], "'soon'"),
    Case("huge safety window", ["--all", "--safety-window", "99999999999999d"], "'99999999999999d'"),
    Case("safety window too long", ["--all", "--safety-window", "1000000d"], "'1000000d'"),
    Case("negative safety window", ["--all", "--safety-window=-5m"], "'-5m'"),
    Case("zero partition rows", ["--all", "--partition-rows", "0"], "'0'"),
    Case("partition rows not a number", ["--all", "--partition-rows", "abc"], "'abc'"),
    Case("partition rows too many", ["--all", "--partition-rows", "99999999999999"], "'99999999999999'"),
    Case("zero parallel", ["--all", "--parallel", "0"], "--parallel"),
    Case("master Spark rejects", ["--all", "--master", "bogus://x"], "'bogus://x'"),
    Case("master local[0]", ["--all", "--master", "local[0]"], "'local[0]'"),
    Case("dbt command unknown", ["--all", "--dbt", "frobnicate"], "frobnicate"),
    Case("dbt option unknown", ["--all", "--dbt", "run --bogus"], "--bogus"),
    Case("dbt option value", ["--all", "--dbt", "build --threads x"], "'x'"),
    Case("dbt empty", ["--all", "--dbt", ""], "--dbt ''"),
    Case("dbt command that merges nothing", ["--all", "--dbt", "docs generate"], "docs"),
    Case("dbt unclosed quote", ["--all", "--dbt", "run --select 'replica"], "'replica"),
    Case("snapshot date", [*CUSTOMERS, "--snapshot-date", "2026-13-01"], "'2026-13-01'"),
    Case("snapshot file without date", [*CUSTOMERS, "--snapshot-file", "x.csv"], "'x.csv'"),
    Case(
        "snapshot file missing",
        [*CUSTOMERS, "--snapshot-date", "2026-01-01", "--snapshot-file", "/nonexistent/x.csv"],
        "'/nonexistent/x.csv'",
    ),
    Case(
        "snapshot file repeating a key",
        [*CUSTOMERS, "--snapshot-date", "2026-01-01", "--snapshot-file", "{root}/drop/customers.csv"],
        "holds a key (--verbose shows it) more than once",
        files={"drop/customers.csv": SNAPSHOT_HEADER + SNAPSHOT_ROW.format(1) + SNAPSHOT_ROW.format(1)},
    ),
    Case(
        "snapshot file with a bad value",
        [*CUSTOMERS, "--snapshot-date", "2026-01-01", "--snapshot-file", "{root}/drop/customers.csv"],
        '/drop/customers.csv\': row 2, column creditlimit: invalid input syntax for type numeric: "lots"',
        files={
            "drop/customers.csv": SNAPSHOT_HEADER
            + SNAPSHOT_ROW.format(1)
            + SNAPSHOT_ROW.format(2).replace(",100,", ",lots,")
        },
    ),
    Case("every with a snapshot", [*CUSTOMERS, "--every", "5m", "--snapshot-date", "2026-01-01"], "--snapshot-date"),
    Case(
        "snapshot of a table without history", ["--table", "dbo.Orders", "--snapshot-date", "2026-01-01"], "dbo.Orders"
    ),
    # Refused before Java starts (in a second, not after the JVM's start): no JVM would start here.
    Case("unknown table, no Java", ["--table", "dbo.Nope"], "'dbo.Nope'", env={"JAVA_HOME": "/nonexistent/jdk"}),
    Case(
        "reconcile of an unknown table, no Java",
        ["reconcile", "--table", "dbo.Nope"],
        "'dbo.Nope'",
        env={"JAVA_HOME": "/nonexistent/jdk"},
    ),
    Case(
        "seed flag, no Java",
        ["--all"],
        "'maybe'",
        seeds=sync_tables("dbo,Customers,,,maybe"),
        env={"JAVA_HOME": "/nonexistent/jdk"},
    ),
    Case("unknown command", ["frobnicate"], "'frobnicate'"),
    Case("verify an unknown table", ["verify", "--table", "dbo.Nope"], "'dbo.Nope'"),
    Case("generate with a bad master", ["generate", "--master", "nope"], "'nope'"),
    # The environment.
    Case("no source URL", ["--all"], "TIDEMARK_SOURCE_URL", env={"TIDEMARK_SOURCE_URL": None}),
    Case("source URL scheme", ["--all"], "'mysql://db01/app'", env={"TIDEMARK_SOURCE_URL": "mysql://db01/app"}),
    Case(
        "source URL port",
        ["--all"],
        "99999",
        env={"TIDEMARK_SOURCE_URL": "jdbc:sqlserver://db01:99999;databaseName=x"},
    ),
    Case(
        "password with # in a malformed URL",
        ["--all"],
        "'db01:5x'",
        env={"TIDEMARK_SOURCE_URL": f"postgresql://me:{SECRET}@db01:5x/app"},
    ),
    Case(
        "braced password not closed",
        ["--all"],
        "no closing '}'",
        env={"TIDEMARK_SOURCE_URL": "jdbc:sqlserver://db01;databaseName=x;password={" + SECRET},
    ),
    Case(
        "target not PostgreSQL",
        ["--all"],
        "sqlserver://",
        env={"TIDEMARK_TARGET_URL": "jdbc:sqlserver://h;databaseName=x"},
    ),
    Case("target URL and profile disagree", ["--all"], "'elsewhere'", env={"TIDEMARK_TARGET_DBNAME": "elsewhere"}),
    Case("target user disagrees", ["--all"], "'someone_else'", env={"TIDEMARK_TARGET_USER": "someone_else"}),
    Case("safety window setting", ["--all"], "'forever'", env={"TIDEMARK_SAFETY_WINDOW": "forever"}),
    Case("partition threshold", ["--all"], "PARTITION_THRESHOLD", env={"PARTITION_THRESHOLD": "0"}),
    Case("max partitions", ["--all"], "'-1'", env={"MAX_PARTITIONS_PER_TABLE": "-1"}),
    Case("min partition rows", ["--all"], "'x'", env={"MIN_PARTITION_ROWS": "x"}),
    Case("parallel transfers", ["--all"], "MAX_PARALLEL_TRANSFERS", env={"MAX_PARALLEL_TRANSFERS": "0"}),
    Case("read uncommitted", ["--all"], "'maybe'", env={"TIDEMARK_READ_UNCOMMITTED": "maybe"}),
    Case("spark master setting", ["--all"], "'nope'", env={"TIDEMARK_SPARK_MASTER": "nope"}),
    Case("driver memory setting", ["--all"], "'lots'", env={"SPARK_DRIVER_MEMORY": "lots"}),
    Case("jar missing", ["--all"], "/nonexistent/driver.jar", env={"TIDEMARK_JARS": "/nonexistent/driver.jar"}),
    Case(
        "target port",
        ["status"],
        "'abc'",
        env={"TIDEMARK_TARGET_URL": None, "TIDEMARK_TARGET_HOST": "127.0.0.1", "TIDEMARK_TARGET_PORT": "abc"},
    ),
    Case("project dir", ["--all"], "/nonexistent/project", env={"TIDEMARK_PROJECT_DIR": "/nonexistent/project"}),
    Case("empty cursor candidates", ["--all"], "DATE_UPDATED_FIELD", env={"DATE_UPDATED_FIELD": " , "}),
    Case("lock timeout", ["--all"], "'forever'", env={"TIDEMARK_LOCK_TIMEOUT": "forever"}),
    Case("lock attempts", ["--all"], "'0'", env={"TIDEMARK_LOCK_ATTEMPTS": "0"}),
    Case("merge timeout", ["--all", "--dbt", "build"], "'8d'", env={"TIDEMARK_MERGE_TIMEOUT": "8d"}),
    Case("connect timeout", ["--all"], "'0s'", env={"TIDEMARK_TARGET_CONNECT_TIMEOUT": "0s"}),
    Case(
        "state schema setting",
        ["--all"],
        "'pg_state'",
        env={"TIDEMARK_STATE_SCHEMA": "pg_state", "TIDEMARK_STATE_KEY": SECRET},
    ),
    Case("state schema with a quote", ["--all"], """'tenant"a'""", env={"TIDEMARK_STATE_SCHEMA": 'tenant"a'}),
    # The embedded server has no pgcrypto: a state key is refused before anything is written.
    Case("state key without pgcrypto", ["--all"], "TIDEMARK_STATE_KEY", env={"TIDEMARK_STATE_KEY": SECRET}),
    Case("read retries setting", ["--all"], "'21'", env={"TIDEMARK_READ_RETRIES": "21"}),
    Case("retry backoff setting", ["--all"], "'soon'", env={"TIDEMARK_RETRY_BACKOFF": "soon"}),
    Case("metrics port setting", ["--all", "--every", "1h"], "'99999'", env={"TIDEMARK_METRICS_PORT": "99999"}),
    # The target refuses or cannot be reached.
    Case(
        "target database missing",
        ["--all"],
        'database "no_such_db" does not exist',
        env={"TIDEMARK_TARGET_DBNAME": None, "TIDEMARK_TARGET_URL": "@no_such_db"},
        exit_code=4,
    ),
    Case(
        "target port closed",
        ["status"],
        "Connection refused",
        env={"TIDEMARK_TARGET_DBNAME": None, "TIDEMARK_TARGET_PORT": None, "TIDEMARK_TARGET_URL": "@:1"},
        exit_code=4,
    ),
    Case(
        "target role missing",
        ["--all"],
        'role "nobody_here" does not exist',
        env={"TIDEMARK_TARGET_USER": None, "TIDEMARK_TARGET_URL": "@nobody_here@"},
        exit_code=4,
    ),
    Case(
        "target password wrong",
        ["--all"],
        f'password authentication failed for user "{LOCKED_ROLE}"',
        env={
            "TIDEMARK_TARGET_USER": None,
            "TIDEMARK_TARGET_URL": f"@{LOCKED_ROLE}@",
            "TIDEMARK_TARGET_PASSWORD": SECRET,
        },
        exit_code=4,
    ),
    Case(
        "source password wrong",
        ["--all"],
        f'password authentication failed for user "{LOCKED_ROLE}"',
        env={"TIDEMARK_SOURCE_URL": f"@{LOCKED_ROLE}@"},
        exit_code=3,
    ),
    Case(
        "target user without CREATE",
        ["--all"],
        "permission denied for schema _migration",
        env={"TIDEMARK_TARGET_USER": None, "TIDEMARK_TARGET_URL": f"@{READER_ROLE}@"},
        exit_code=4,
    ),
    # init.
    Case("init through a file", ["init", "--project-dir", "/etc/hostname/project"], "'/etc/hostname'"),
    # sync_tables.csv.
    Case(
        "seed header typo",
        ["--all"],
        "cursor_colum",
        seeds={"sync_tables.csv": "source_schema,source_table,cursor_colum\n"},
    ),
    Case("seed column missing", ["--all"], "source_table", seeds={"sync_tables.csv": "source_schema\ndbo\n"}),
    Case("seed extra field", ["--all"], "line 2", seeds=sync_tables("dbo,Customers,,,true,surplus")),
    Case("seed short row", ["--all"], "line 2", seeds=sync_tables("dbo")),
    Case("seed header only", ["--all"], "lists no table", seeds=sync_tables()),
    Case("seed empty", ["--all"], "sync_tables.csv", seeds={"sync_tables.csv": ""}),
    Case("seed flag", ["--all"], "'maybe'", seeds=sync_tables("dbo,Customers,,,maybe")),
    Case(
        "seed delete share",
        ["reconcile", "--all"],
        "max_delete_share must be a share of the replica such as 10% or 0.1, not '150%'",
        seeds={"sync_tables.csv": "source_schema,source_table,max_delete_share\ndbo,Customers,150%\n"},
    ),
    Case(
        "seed delete rows",
        ["reconcile", "--all"],
        "max_delete_rows must be a whole number of rows, not 'many'",
        seeds={"sync_tables.csv": "source_schema,source_table,max_delete_rows\ndbo,Customers,many\n"},
    ),
    Case(
        "key column twice",
        ["--all"],
        "'CustomerID' twice",
        seeds=sync_tables("dbo,Customers,,CustomerID|CustomerID,true"),
    ),
    Case("every table disabled", ["--all"], "enables no table", seeds=sync_tables("dbo,Customers,,,false")),
    Case(
        "disabled table named",
        CUSTOMERS,
        "'dbo.Customers' is disabled",
        seeds=sync_tables("dbo,Customers,,,false", "dbo,Orders,,,true"),
    ),
    Case("pattern matching nothing", ["--all"], "'nosuch.*'", seeds=sync_tables("nosuch,*,,,true")),
    Case(
        "seed table twice",
        ["--all"],
        "dbo.Customers",
        seeds=sync_tables("dbo,Customers,,,true", "dbo,Customers,,,true"),
    ),
    Case(
        "two tables, one replica",
        ["--all"],
        "'dbo.customers'",
        seeds=sync_tables("dbo,Customers,,,true", "dbo,customers,,,true"),
    ),
    Case("ambiguous table", ["--table", "a.b.c"], "ambiguous", seeds=sync_tables('"a.b",c,,,true', 'a,"b.c",,,true')),
    Case("key override unknown", ["--all"], "Nope", seeds=sync_tables("dbo,Customers,,Nope,true")),
    Case(
        "key override empty part",
        ["--all"],
        "'CustomerID||Name'",
        seeds=sync_tables("dbo,Customers,,CustomerID||Name,true"),
    ),
    Case("cursor not temporal", ["--all"], "'Name'", seeds=sync_tables("dbo,Customers,Name,,true")),
    Case("cursor unknown", ["--all"], "'Nope'", seeds=sync_tables("dbo,Customers,Nope,,true")),
    Case(
        "injection as a table name",
        ["--all"],
        'Customers"; drop table',
        seeds=sync_tables('dbo,"Customers""; drop table dbo.""Orders""; --",,,true'),
    ),
    Case("NUL in a seed", ["--all"], "NUL", seeds=sync_tables("dbo,Cust\x00omers,,,true")),
    Case("replica name too long", ["--all"], "bytes long", seeds=sync_tables("dbo," + "T" * 60 + ",,,true")),
    Case("reserved column", ["--all"], "'_tidemark_run_id'", seeds=sync_tables("dbo,Reserved,,,true")),
    Case("columns differing in case", ["--all"], "'name'", seeds=sync_tables("dbo,Cased,,,true")),
    Case("type the map lacks", ["--all"], "'point'", seeds=sync_tables("dbo,Points,,,true")),
    Case(
        "record_id repeating at the source",
        ["--all"],
        "record_id 'Tag' is not unique in the source ('twice'",
        seeds={"sync_tables.csv": "source_schema,source_table,record_id\ndbo,Repeats,Tag\n"},
    ),
    Case(
        "unique_keys repeating at the source",
        ["--all"],
        "unique_keys 'Tag|Part' is not unique in the source (('twice', '1')",
        seeds={"sync_tables.csv": "source_schema,source_table,unique_keys\ndbo,Customers,\ndbo,Repeats,Tag|Part\n"},
    ),
    # host_aliases.csv and type_map.csv.
    Case("host twice", ["--all"], "'127.0.0.1'", seeds={"host_aliases.csv": "host,alias\n127.0.0.1,a\n127.0.0.1,b\n"}),
    Case("alias column missing", ["--all"], "alias", seeds={"host_aliases.csv": "host\n127.0.0.1\n"}),
    Case("unknown target type", ["--all"], "'banana'", seeds=type_map_with("postgres,point,banana,text,")),
    Case(
        "target type that tries SQL",
        ["--all"],
        "text); drop table x; --",
        seeds=type_map_with('postgres,point,"text); drop table x; --",text,'),
    ),
    Case("target type modifier", ["--all"], "'varchar(0)'", seeds=type_map_with("postgres,point,varchar(0),text,")),
    Case("transfer", ["--all"], "'binary'", seeds=type_map_with("postgres,point,text,binary,")),
    Case("placeholder", ["--all"], "bogus", seeds=type_map_with("postgres,point,varchar({bogus}),text,")),
    Case("type mapped twice", ["--all"], "'bigint'", seeds=type_map_with("postgres,bigint,bigint,native,")),
    Case("source dialect", ["--all"], "'oracle'", seeds=type_map_with("oracle,number,numeric,native,")),
]


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory, pg_admin_url: str, spark: SparkSession) -> Iterator[Project]:
    """The demo, synced once; and source tables a seed case may name: a reserved column name, two
    columns that differ only in case, a type the map lacks, a column whose values repeat."""
    with new_project(tmp_path_factory.mktemp("catalogue") / "project", pg_admin_url, spark) as project:
        with project.source() as conn:
            create_and_fill(conn, size=30, seed=3)
            conn.execute('create table dbo."Reserved" ("Id" integer primary key, "_tidemark_run_id" integer)')
            conn.execute('create table dbo."Cased" ("Id" integer primary key, "Name" text, "name" text)')
            conn.execute('create table dbo."Points" ("Id" integer primary key, "Where" point)')
            conn.execute('create table dbo."Repeats" ("Id" integer primary key, "Tag" text, "Part" integer)')
            conn.execute(
                'insert into dbo."Repeats" values '
                "(1, 'once', 1), (2, 'twice', 1), (3, 'twice', 1), (4, null, 1), (5, null, 1)"
            )
        _roles(pg_admin_url, project.target_db)
        project.generate()
        project.sync_replicas()
        project.close()
        yield project


def _roles(admin_url: str, target_db: str) -> None:
    """LOCKED_ROLE, whom the server asks for a password (the others it trusts), and READER_ROLE."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for role, password in ((LOCKED_ROLE, "not the secret"), (READER_ROLE, None)):
            if conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone() is None:
                conn.execute(sql.SQL("create role {} login password {}").format(sql.Identifier(role), password))
        conn.execute(sql.SQL("revoke create on database {} from public").format(sql.Identifier(target_db)))
        hba = Path(str(conn.execute("show hba_file").fetchone()[0]))  # type: ignore[index]
        rule = f"host all {LOCKED_ROLE} 127.0.0.1/32 scram-sha-256\n"
        if rule not in hba.read_text():
            hba.write_text(rule + hba.read_text())  # the first matching line decides
        conn.execute("select pg_reload_conf()")


def _changed_url(url: str, spec: str) -> str:
    """A project's database URL changed as `spec` says: '@DB' another database, '@:PORT' another port,
    '@USER@' another user."""
    base, database = url.rsplit("/", 1)
    scheme, host = base.split("://", 1)
    host = host.split("@", 1)[-1]
    if spec.startswith("@:"):
        return f"{scheme}://{host.rsplit(':', 1)[0]}{spec[1:]}/{database}"
    if spec.endswith("@") and spec.count("@") == 2:
        return f"{scheme}://{spec[1:]}{host}/{database}"
    return f"{scheme}://{host}/{spec[1:]}"


def _run(project: Project, case: Case, root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **project.env, "TIDEMARK_PROJECT_DIR": str(root), "DBT_PROFILES_DIR": str(root)}
    env["TIDEMARK_SOURCE_PASSWORD"] = SECRET
    for name, value in case.env.items():
        if value is None:
            env.pop(name, None)
        elif name == "TIDEMARK_TARGET_URL" and value.startswith("@"):
            env[name] = _changed_url(project.target_url, value)
        elif name == "TIDEMARK_SOURCE_URL" and value.startswith("@"):
            env[name] = _changed_url(project.source_url, value)
        else:
            env[name] = value
    argv = [argument.replace("{root}", str(root)) for argument in case.argv]
    return run_cli(argv, env, REPO, timeout=300)


def first_error_line(stderr: str) -> str:
    return next((line for line in stderr.splitlines() if line.startswith("error:") or ": error:" in line), "")


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_is_refused_naming_the_value_and_changes_nothing(synced: Project, case: Case, tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(synced.root, root, ignore=shutil.ignore_patterns("target", "logs"), symlinks=True)
    for name, text in case.seeds.items():
        (root / "seeds" / name).write_text(text, encoding="utf-8")
    for name, text in case.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    before = (database_state(synced.source_url), database_state(synced.target_url))
    files_before = _files(root)
    result = _run(synced, case, root)
    output = result.stdout + result.stderr
    assert result.returncode == case.exit_code, output[-3000:]
    line = first_error_line(result.stderr)
    print(f"{case.name}: exit {result.returncode}: {line}")  # the catalogue's outcomes, with pytest -rP
    assert case.needle in line, f"{case.needle!r} not in the first error line {line!r}:\n{result.stderr[-3000:]}"
    assert "Traceback" not in output
    assert SECRET not in output and "S3cr3t" not in output
    assert (database_state(synced.source_url), database_state(synced.target_url)) == before
    assert _files(root) == files_before


def _files(root: Path) -> dict[str, bytes]:
    """The project's files and their content, but dbt's target/ (where every command records its run)."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.relative_to(root).parts[0] not in {"target", "logs", "dbt_packages"}
    }


def test_the_catalogue_covers_every_category() -> None:
    assert len(CASES) >= 60
    assert len({case.name for case in CASES}) == len(CASES)
