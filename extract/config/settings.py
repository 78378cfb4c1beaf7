"""Settings from the environment: connections, cursor candidates, Spark. Secrets never leave here."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from extract.config.durations import parse_duration
from extract.config.environment import extra_jars, gx_root, project_dir
from extract.config.lock_settings import LockSettings, lock_settings
from extract.config.reconcile_settings import ReconcileSettings, reconcile_settings
from extract.config.urls import DatabaseUrl, parse_url
from extract.core.errors import TidemarkError
from extract.core.secrets import register

DEFAULT_CURSOR_CANDIDATES = "ModifiedDate,LastEditedWhen,UpdatedAt,updated_at,LastModified"
#: Re-read this much before the committed watermark: rows stamped before the clock was
#: read but committed after the read (late commits) are still picked up.
DEFAULT_SAFETY_WINDOW = "5m"
#: A catalog read looks for definitions changed since the previous read's clock less this much:
#: DDL committed late, or stamped by a clock that drifted, is still seen.
DEFAULT_CATALOG_PREPONE = "3h"
#: A batch segment over this many rows is read as several key-range partitions in parallel.
DEFAULT_PARTITION_THRESHOLD = "200000"
DEFAULT_MAX_PARTITIONS = "32"
DEFAULT_MIN_PARTITION_ROWS = "50000"
#: How long connecting to the source or the target may take before the command gives up.
DEFAULT_CONNECT_TIMEOUT = "10s"
#: Tables an `--all` run syncs at once.
DEFAULT_MAX_PARALLEL_TRANSFERS = "2"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}
#: How often `--every` may sync: at least a second apart (0s would be a busy loop), at most a week.
MIN_EVERY = timedelta(seconds=1)
MAX_EVERY = timedelta(days=7)
#: Whole numbers a setting may take at most (partitions, rows, tables at once).
MAX_COUNT = 1_000_000_000
#: Spark master URLs, as spark-submit documents them.
_MASTER = re.compile(
    r"^(local(\[(\*|[1-9]\d{0,4})(,[1-9]\d{0,3})?\])?|local-cluster\[[1-9]\d{0,3},[1-9]\d{0,3},[1-9]\d{0,6}\]"
    r"|spark://[A-Za-z0-9_.\-\[\]:]+(,[A-Za-z0-9_.\-\[\]:]+)*|yarn|k8s://\S+)$"
)


@dataclass(frozen=True)
class Settings:
    source: DatabaseUrl
    target: DatabaseUrl
    project_dir: Path
    #: The folder that holds the great-expectations project (gx/): the dbt project's, unless TIDEMARK_GX_ROOT.
    gx_root: Path
    cursor_candidates: tuple[str, ...]
    spark_master: str
    extra_jars: tuple[str, ...]
    read_uncommitted: bool
    safety_window: timedelta
    partition_threshold: int
    max_partitions: int
    min_partition_rows: int
    #: Set: cut every this many rows, whatever the threshold (for tests and tuning).
    partition_rows: int | None
    max_parallel_transfers: int
    reconcile: ReconcileSettings
    #: Read here so that a bad value is refused before anything is written; the DDL reads it again.
    lock: LockSettings
    catalog_prepone: timedelta = timedelta(hours=3)

    @property
    def seeds_dir(self) -> Path:
        return self.project_dir / "seeds"

    @property
    def jvm_log(self) -> Path:
        """Where the driver JVM's own output goes (beside dbt's log), unless --verbose shows it."""
        return self.project_dir / "logs" / "tidemark-jvm.log"


def _require(env: Mapping[str, str], name: str, hint: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise TidemarkError(f"{name} is not set: {hint}")
    return value


def _with_credentials(url: DatabaseUrl, env: Mapping[str, str], prefix: str) -> DatabaseUrl:
    """The URL with the user and password of PREFIX_USER / PREFIX_PASSWORD; refused when the URL
    names another user or password, since either would silently win over the other."""
    user = env.get(f"{prefix}_USER") or None
    password = env.get(f"{prefix}_PASSWORD") or None
    register(password)
    if user and url.user and user != url.user:
        raise TidemarkError(
            f"{prefix}_USER is {user!r} but {prefix}_URL names the user {url.user!r}: set the user in one place"
        )
    if password and url.password and password != url.password:
        raise TidemarkError(f"{prefix}_PASSWORD and the password in {prefix}_URL differ: set the password in one place")
    timeout = parse_duration(
        env.get(f"{prefix}_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT),
        f"{prefix}_CONNECT_TIMEOUT",
        timedelta(seconds=1),
        timedelta(minutes=10),
    )
    return replace(
        url.with_credentials(user or url.user, password or url.password), connect_timeout=int(timeout.total_seconds())
    )


def dbt_profile_env(target: DatabaseUrl) -> dict[str, str]:
    """The variables the dbt profile (profiles.yml.example) reads, for the target at `target`."""
    return {
        "TIDEMARK_TARGET_HOST": target.host,
        "TIDEMARK_TARGET_PORT": str(target.port),
        "TIDEMARK_TARGET_USER": target.user or "",
        "TIDEMARK_TARGET_PASSWORD": target.password or "",
        "TIDEMARK_TARGET_DBNAME": target.database,
    }


def _agrees_with_profile(target: DatabaseUrl, env: Mapping[str, str]) -> None:
    """Refuse TIDEMARK_TARGET_URL beside a dbt profile variable that names another server or database:
    the extract would land in one place and dbt merge in another."""
    for name, value in dbt_profile_env(target).items():
        if name in {"TIDEMARK_TARGET_USER", "TIDEMARK_TARGET_PASSWORD"}:
            continue  # compared in _with_credentials
        given = env.get(name, "").strip()
        if given and given != value:
            raise TidemarkError(
                f"TIDEMARK_TARGET_URL names {name.removeprefix('TIDEMARK_TARGET_').lower()} {value!r} but {name} "
                f"is {given!r}: set the target once, in TIDEMARK_TARGET_URL (dbt is given its parts)"
            )


def target_from_env(env: Mapping[str, str] | None = None) -> DatabaseUrl:
    """TIDEMARK_TARGET_URL, else the variables the dbt profile reads."""
    env = os.environ if env is None else env
    if env.get("TIDEMARK_TARGET_URL", "").strip():
        target = parse_url(env["TIDEMARK_TARGET_URL"])
        if target.dialect == "postgres":
            _agrees_with_profile(target, env)
    elif env.get("TIDEMARK_TARGET_HOST", "").strip():
        port = env.get("TIDEMARK_TARGET_PORT", "5432")
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise TidemarkError(f"TIDEMARK_TARGET_PORT must be a port number, not {port!r}")
        target = parse_url(
            f"postgresql://{env['TIDEMARK_TARGET_HOST']}:{port}/{env.get('TIDEMARK_TARGET_DBNAME', 'postgres')}"
        )
    else:
        raise TidemarkError(
            "no target database: set TIDEMARK_TARGET_URL (postgresql://HOST:PORT/DB) "
            "or the dbt profile's TIDEMARK_TARGET_HOST/PORT/USER/PASSWORD/DBNAME"
        )
    if target.dialect != "postgres":
        raise TidemarkError(f"the target must be PostgreSQL, not {target.display}")
    return _with_credentials(target, env, "TIDEMARK_TARGET")


def source_from_env(env: Mapping[str, str] | None = None) -> DatabaseUrl:
    env = os.environ if env is None else env
    url = _require(env, "TIDEMARK_SOURCE_URL", "a JDBC URL such as jdbc:sqlserver://HOST:1433;databaseName=DB")
    return _with_credentials(parse_url(url), env, "TIDEMARK_SOURCE")


def _positive(text: str, name: str) -> int:
    cleaned = text.strip().replace("_", "")
    if not cleaned.isdigit() or not 1 <= int(cleaned) <= MAX_COUNT:
        raise TidemarkError(f"{name} must be a whole number from 1 to {MAX_COUNT:,}, not {text!r}")
    return int(cleaned)


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value not in _TRUE | _FALSE:
        raise TidemarkError(f"{name} must be 1/true/yes/on or 0/false/no/off, not {env[name]!r}")
    return value in _TRUE


def spark_master(text: str, name: str) -> str:
    """A Spark master URL as spark-submit takes it (local[N], spark://HOST:PORT, yarn, k8s://...)."""
    if not _MASTER.match(text.strip()):
        raise TidemarkError(
            f"{name} {text!r} is not a Spark master URL: use local, local[N], local[*], spark://HOST:PORT, "
            "yarn or k8s://HOST:PORT"
        )
    return text.strip()


def spark_master_from_env(env: Mapping[str, str] | None = None) -> str:
    text = (os.environ if env is None else env).get("TIDEMARK_SPARK_MASTER", "local[*]")
    return spark_master(text, "TIDEMARK_SPARK_MASTER")


def _setting(env: Mapping[str, str], name: str, default: str) -> int:
    return _positive(env.get(name, default), name)


def load_settings(
    env: Mapping[str, str] | None = None,
    master: str | None = None,
    safety_window: str | None = None,
    partition_rows: str | None = None,
    parallel: str | None = None,
) -> Settings:
    env = os.environ if env is None else env
    window_text, window_name = (
        (safety_window, "--safety-window")
        if safety_window is not None
        else (env.get("TIDEMARK_SAFETY_WINDOW", DEFAULT_SAFETY_WINDOW), "TIDEMARK_SAFETY_WINDOW")
    )
    candidates = tuple(
        c.strip() for c in env.get("DATE_UPDATED_FIELD", DEFAULT_CURSOR_CANDIDATES).split(",") if c.strip()
    )
    if not candidates:
        # Empty, it would make every table without a seed's cursor_column a full read, silently.
        raise TidemarkError(
            f"DATE_UPDATED_FIELD is set to {env.get('DATE_UPDATED_FIELD', '')!r}, which names no column: name the "
            f"cursor columns to look for (comma-separated), or unset it for the default {DEFAULT_CURSOR_CANDIDATES!r}"
        )
    return Settings(
        source=source_from_env(env),
        target=target_from_env(env),
        project_dir=project_dir(env),
        gx_root=gx_root(env),
        cursor_candidates=candidates,
        spark_master=(spark_master(master, "--master") if master is not None else spark_master_from_env(env)),
        extra_jars=extra_jars(env),
        read_uncommitted=_flag(env, "TIDEMARK_READ_UNCOMMITTED"),
        safety_window=parse_duration(window_text, window_name),
        partition_threshold=_setting(env, "PARTITION_THRESHOLD", DEFAULT_PARTITION_THRESHOLD),
        max_partitions=_setting(env, "MAX_PARTITIONS_PER_TABLE", DEFAULT_MAX_PARTITIONS),
        min_partition_rows=_setting(env, "MIN_PARTITION_ROWS", DEFAULT_MIN_PARTITION_ROWS),
        partition_rows=(
            _positive(partition_rows, "--partition-rows")
            if partition_rows is not None
            else (_setting(env, "PARTITION_ROWS", "") if env.get("PARTITION_ROWS", "").strip() else None)
        ),
        max_parallel_transfers=(
            _positive(parallel, "--parallel")
            if parallel is not None
            else _setting(env, "MAX_PARALLEL_TRANSFERS", DEFAULT_MAX_PARALLEL_TRANSFERS)
        ),
        reconcile=reconcile_settings(env),
        lock=lock_settings(env),
        catalog_prepone=parse_duration(
            env.get("TIDEMARK_CATALOG_PREPONE", DEFAULT_CATALOG_PREPONE), "TIDEMARK_CATALOG_PREPONE"
        ),
    )
