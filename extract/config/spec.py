"""Every setting tidemark takes from the environment, in one place: its name, what it takes, its default
and what it is for. The modules of extract/config read them through these; docs/settings.md lists them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from extract.config import values as v
from extract.config.setting import Setting
from extract.core.sql_contract import LOCK_TIMEOUT_MS, MERGE_TIMEOUT_MS
from extract.core.state_schema import DEFAULT_STATE_SCHEMA

#: Whole numbers a setting may take at most (partitions, rows, tables at once).
MAX_COUNT = 1_000_000_000
_COUNT = v.whole_number(1, MAX_COUNT)
_CONNECT = v.duration(timedelta(seconds=1), timedelta(minutes=10))
DEFAULT_CURSOR_CANDIDATES = "ModifiedDate,LastEditedWhen,UpdatedAt,updated_at,LastModified"

# The databases.
SOURCE_URL = Setting(
    "TIDEMARK_SOURCE_URL",
    v.DATABASE_URL,
    None,
    "the source database, as a JDBC URL such as jdbc:sqlserver://HOST:1433;databaseName=DB",
)
SOURCE_USER = Setting("TIDEMARK_SOURCE_USER", v.TEXT, None, "the source's user, unless its URL names one")
SOURCE_PASSWORD = Setting(
    "TIDEMARK_SOURCE_PASSWORD", v.TEXT, None, "the source user's password, unless its URL holds it", secret=True
)
#: How long connecting to the source or the target may take before the command gives up.
SOURCE_CONNECT_TIMEOUT = Setting(
    "TIDEMARK_SOURCE_CONNECT_TIMEOUT", _CONNECT, "10s", "how long connecting to the source may take"
)
TARGET_URL = Setting(
    "TIDEMARK_TARGET_URL", v.DATABASE_URL, None, "the PostgreSQL that holds the replicas: postgresql://HOST:PORT/DB"
)
TARGET_HOST = Setting("TIDEMARK_TARGET_HOST", v.TEXT, None, "the target's host, without TIDEMARK_TARGET_URL")
TARGET_PORT = Setting("TIDEMARK_TARGET_PORT", v.PORT, "5432", "the target's port, without TIDEMARK_TARGET_URL")
TARGET_DBNAME = Setting(
    "TIDEMARK_TARGET_DBNAME", v.TEXT, "postgres", "the target's database, without TIDEMARK_TARGET_URL"
)
TARGET_USER = Setting("TIDEMARK_TARGET_USER", v.TEXT, None, "the target's user, unless its URL names one")
TARGET_PASSWORD = Setting(
    "TIDEMARK_TARGET_PASSWORD", v.TEXT, None, "the target user's password, unless its URL holds it", secret=True
)
TARGET_CONNECT_TIMEOUT = Setting(
    "TIDEMARK_TARGET_CONNECT_TIMEOUT", _CONNECT, "10s", "how long connecting to the target may take"
)

# What a sync reads, and how.
PROJECT_DIR = Setting("TIDEMARK_PROJECT_DIR", v.FOLDER, ".", "the dbt project tidemark works in (--project-dir)")
GX_ROOT = Setting(
    "TIDEMARK_GX_ROOT", v.FOLDER, None, "the folder of the great-expectations project (gx/), else the dbt project"
)
CURSOR_CANDIDATES = Setting(
    "DATE_UPDATED_FIELD",
    v.column_names(DEFAULT_CURSOR_CANDIDATES),
    DEFAULT_CURSOR_CANDIDATES,
    "the cursor columns to look for in a table, first found wins",
)
SPARK_MASTER = Setting("TIDEMARK_SPARK_MASTER", v.SPARK_MASTER, "local[*]", "where Spark runs (--master)")
JARS = Setting("TIDEMARK_JARS", v.PATHS, None, "jars of the source's JDBC driver (e.g. mssql-jdbc)")
READ_UNCOMMITTED = Setting(
    "TIDEMARK_READ_UNCOMMITTED", v.FLAG, "false", "read the source WITH (NOLOCK): never blocks, may copy rollbacks"
)
#: Late commits: rows stamped before the clock was read but committed after the read are still picked up.
SAFETY_WINDOW = Setting(
    "TIDEMARK_SAFETY_WINDOW", v.duration(), "5m", "re-read this much before the committed watermark"
)
#: A file still being written changes size or time between two listings this far apart (extract/files).
FILES_SETTLE = Setting(
    "TIDEMARK_FILES_SETTLE", v.duration(), "1s", "a new file is listed twice this far apart; one still growing waits"
)
#: DDL committed late, or stamped by a clock that drifted, is still seen.
CATALOG_PREPONE = Setting(
    "TIDEMARK_CATALOG_PREPONE", v.duration(), "3h", "a catalog read looks this much before the previous one"
)
PARTITION_THRESHOLD = Setting(
    "PARTITION_THRESHOLD", _COUNT, "200000", "a batch over this many rows is read in key-range partitions"
)
MAX_PARTITIONS = Setting("MAX_PARTITIONS_PER_TABLE", _COUNT, "32", "the most partitions a table is read in")
MIN_PARTITION_ROWS = Setting("MIN_PARTITION_ROWS", _COUNT, "50000", "the fewest rows a partition is cut to")
PARTITION_ROWS = Setting(
    "PARTITION_ROWS", _COUNT, None, "cut every this many rows, whatever the threshold (--partition-rows)"
)
MAX_PARALLEL_TRANSFERS = Setting("MAX_PARALLEL_TRANSFERS", _COUNT, "2", "tables an --all run syncs at once")
READ_RETRIES = Setting(
    "TIDEMARK_READ_RETRIES", v.whole_number(0, 20), "3", "how often a failed read of the source is tried again"
)
RETRY_BACKOFF = Setting(
    "TIDEMARK_RETRY_BACKOFF", v.duration(maximum=timedelta(minutes=10)), "1s", "the pause before a read is retried"
)

#: A table whose Change Tracking version expired is brought back by a reconcile (only the differences
#: move), or its run fails.
ON_EXPIRED_VERSION = Setting(
    "TIDEMARK_ON_EXPIRED_VERSION",
    v.one_of("reconcile", "fail"),
    "reconcile",
    "when Change Tracking no longer holds a table's changes since its state: reconcile the table, or fail it",
)

# The state in the target.
STATE_SCHEMA = Setting(
    "TIDEMARK_STATE_SCHEMA", v.SCHEMA_NAME, DEFAULT_STATE_SCHEMA, "the target's schema for tidemark's state"
)
STATE_KEY = Setting(
    "TIDEMARK_STATE_KEY",
    v.TEXT,
    None,
    "encrypts the key values the state keeps (pgcrypto); masked in every message",
    secret=True,
)

# Reconcile.
RECONCILE_FACTOR = Setting(
    "TIDEMARK_RECONCILE_FACTOR",
    v.POWER_OF_TWO,
    "32",
    "a differing range splits into this many parts (reladiff splits by 32 too)",
)
RECONCILE_LEAF_ROWS = Setting(
    "TIDEMARK_RECONCILE_LEAF_ROWS",
    v.whole_number(1, 1_000_000),
    "256",
    "a differing range of at most this many rows a side is compared key by key",
)
#: The answers are aggregates, and starting Spark costs more than the parallel scan saves (1,000,000 rows:
#: 1.9 s from the driver, 9.4 s through 20 Spark tasks on two cores).
RECONCILE_DRIVER_ROWS = Setting(
    "TIDEMARK_RECONCILE_DRIVER_ROWS", v.ROWS, "2000000", "a source this small is compared in one query per level"
)
#: Keeping them costs a first sync a hash of every replica row (10,000,000 rows: about 6 s on two cores).
_PRIME_TEXT = "a first sync of at least this many rows keeps the replica's figures for its first reconcile (0: none)"
RECONCILE_PRIME_ROWS = Setting("TIDEMARK_RECONCILE_PRIME_ROWS", v.ROWS, "2000000", _PRIME_TEXT)
#: Each query of a large table's comparison reads one key range; the source runs this many at once.
RECONCILE_SOURCE_QUERIES = Setting(
    "TIDEMARK_RECONCILE_SOURCE_QUERIES",
    v.whole_number(1, 64),
    "2",
    "the key ranges of one table a reconcile queries the source for at once",
)
RECONCILE_MAX_DELETE_SHARE = Setting(
    "TIDEMARK_RECONCILE_MAX_DELETE_SHARE", v.SHARE, "10%", "the most of a replica a reconcile deletes"
)
#: A small table's few deletes are a large share of it: the share alone would refuse them every time.
RECONCILE_MAX_DELETE_ROWS = Setting(
    "TIDEMARK_RECONCILE_MAX_DELETE_ROWS",
    v.ROWS,
    "100",
    "the rows a reconcile deletes from a replica whatever their share",
)
#: So that the driver's memory stays bounded however dense the differences.
RECONCILE_PAIRS_ROWS = Setting(
    "TIDEMARK_RECONCILE_PAIRS_ROWS",
    v.whole_number(1000, 100_000_000),
    "100000",
    "the most rows whose (key, hash) pairs are fetched at once",
)

# Locks on replicas.
#: A reader's query queues behind a waiting ALTER for at most this long, then the ALTER gives way.
LOCK_TIMEOUT = Setting(
    "TIDEMARK_LOCK_TIMEOUT",
    v.duration(timedelta(milliseconds=10), timedelta(minutes=10)),
    f"{LOCK_TIMEOUT_MS}ms",
    "how long a change of a replica's definition waits for a reader's lock",
)
LOCK_ATTEMPTS = Setting(
    "TIDEMARK_LOCK_ATTEMPTS",
    v.whole_number(1, 20),
    "4",
    "how often such a change tries for the lock, the pause doubling",
)
#: It holds the table's merge lock meanwhile.
MERGE_TIMEOUT = Setting(
    "TIDEMARK_MERGE_TIMEOUT",
    v.duration(maximum=timedelta(days=7)),
    f"{MERGE_TIMEOUT_MS}ms",
    "the longest one merge statement may run; 0s: no limit",
)

# Commands.
METRICS_PORT = Setting("TIDEMARK_METRICS_PORT", v.PORT, None, "an --every process serves metrics here")
METRICS_HOST = Setting("TIDEMARK_METRICS_HOST", v.TEXT, "127.0.0.1", "the address metrics listen on")
CHECK_MAX_LAG = Setting(
    "TIDEMARK_CHECK_MAX_LAG", v.duration(maximum=timedelta(days=3650)), "1d", "how old check lets a watermark be"
)
REPORT_ASSETS = Setting(
    "TIDEMARK_REPORT_ASSETS", v.PATH, None, "the node_modules of the report's libraries, else the installed ones"
)
HOME = Setting("TIDEMARK_HOME", v.FOLDER, ".tidemark", "where the embedded PostgreSQL keeps its data")
PG_PORT = Setting("TIDEMARK_PG_PORT", v.PORT, "54329", "the embedded PostgreSQL's port")

# The tools tidemark runs.
JAVA_HOME = Setting("JAVA_HOME", v.PATH, None, "the JDK Spark runs on, else java on PATH")
SPARK_LOCAL_IP = Setting("SPARK_LOCAL_IP", v.TEXT, "127.0.0.1", "the address Spark binds", reader="spark")
#: Twice Spark's default heap (1g), which once ran out in a reconcile that compared through Spark.
SPARK_DRIVER_MEMORY = Setting(
    "SPARK_DRIVER_MEMORY", v.MEMORY, "2g", "the heap of Spark's driver JVM when tidemark starts it", reader="spark"
)
PYSPARK_PYTHON = Setting(
    "PYSPARK_PYTHON", v.PATH, None, "the Python of Spark's workers, else the one tidemark runs on", reader="spark"
)
DBT_PROFILES_DIR = Setting(
    "DBT_PROFILES_DIR", v.PATH, None, "where dbt finds profiles.yml, else the project's own", reader="dbt"
)
DBT_TARGET = Setting("DBT_TARGET", v.TEXT, None, "the profile's target dbt builds", reader="dbt")
DBT_WRITE_JSON = Setting("DBT_WRITE_JSON", v.TEXT, None, "whether dbt writes its JSON artifacts", reader="dbt")
#: Read by dbt only: the profile (profiles.yml) and the merge's pre-hook; tidemark passes them on.
READ_BY_DBT = (
    Setting("TIDEMARK_DBT_TARGET", v.TEXT, "postgres", "the profile's target: postgres, or spark", reader="dbt"),
    Setting("TIDEMARK_TARGET_SCHEMA", v.TEXT, "public", "the profile's default schema", reader="dbt"),
    Setting(
        "TIDEMARK_DBT_THREADS", v.whole_number(1, MAX_COUNT), "4", "dbt's threads (the spark target: 1)", reader="dbt"
    ),
    Setting("TIDEMARK_SPARK_HOST", v.TEXT, "NA", "the spark target's host (its session needs none)", reader="dbt"),
    Setting("TIDEMARK_SPARK_SCHEMA", v.TEXT, "tidemark", "the lake's Spark schema", reader="dbt"),
    Setting("TIDEMARK_LAKE_DIR", v.PATH, "lake", "the lake's files and Hive metastore", reader="dbt"),
    Setting(
        "TIDEMARK_LAKE_JDBC_JAR", v.PATH, "/usr/share/java/postgresql.jar", "the lake's Postgres driver", reader="dbt"
    ),
    # tidemark sets these two from TIDEMARK_LOCK_TIMEOUT and TIDEMARK_MERGE_TIMEOUT for the dbt it runs, where
    # they differ from the merge's defaults or are set already (config/lock_settings.py: dbt_lock_env).
    Setting(
        "TIDEMARK_LOCK_TIMEOUT_MS", v.MILLISECONDS, str(LOCK_TIMEOUT_MS), "a plain dbt's lock timeout", reader="dbt"
    ),
    Setting(
        "TIDEMARK_MERGE_TIMEOUT_MS", v.MILLISECONDS, str(MERGE_TIMEOUT_MS), "a plain dbt's merge timeout", reader="dbt"
    ),
)

SETTINGS: tuple[Setting[Any], ...] = (
    *(SOURCE_URL, SOURCE_USER, SOURCE_PASSWORD, SOURCE_CONNECT_TIMEOUT),
    *(TARGET_URL, TARGET_HOST, TARGET_PORT, TARGET_DBNAME, TARGET_USER, TARGET_PASSWORD, TARGET_CONNECT_TIMEOUT),
    *(PROJECT_DIR, GX_ROOT, CURSOR_CANDIDATES, SPARK_MASTER, JARS, READ_UNCOMMITTED, SAFETY_WINDOW, CATALOG_PREPONE),
    FILES_SETTLE,
    *(PARTITION_THRESHOLD, MAX_PARTITIONS, MIN_PARTITION_ROWS, PARTITION_ROWS, MAX_PARALLEL_TRANSFERS),
    *(READ_RETRIES, RETRY_BACKOFF, ON_EXPIRED_VERSION, STATE_SCHEMA, STATE_KEY),
    *(RECONCILE_FACTOR, RECONCILE_LEAF_ROWS, RECONCILE_DRIVER_ROWS, RECONCILE_SOURCE_QUERIES, RECONCILE_PAIRS_ROWS),
    RECONCILE_PRIME_ROWS,
    *(RECONCILE_MAX_DELETE_SHARE, RECONCILE_MAX_DELETE_ROWS),
    *(LOCK_TIMEOUT, LOCK_ATTEMPTS, MERGE_TIMEOUT),
    *(METRICS_PORT, METRICS_HOST, CHECK_MAX_LAG, REPORT_ASSETS, HOME, PG_PORT),
    *(JAVA_HOME, SPARK_LOCAL_IP, SPARK_DRIVER_MEMORY, PYSPARK_PYTHON, DBT_PROFILES_DIR, DBT_TARGET, DBT_WRITE_JSON),
    *READ_BY_DBT,
)
