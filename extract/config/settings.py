"""Settings from the environment: connections, cursor candidates, Spark. Secrets never leave here.

What each variable takes, its default and meaning are in spec.py; this module gathers them into Settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from extract.config import spec
from extract.config.environment import extra_jars, gx_root, project_dir
from extract.config.lock_settings import LockSettings, lock_settings
from extract.config.reconcile_settings import ReconcileSettings, reconcile_settings
from extract.config.setting import environment
from extract.config.urls import DatabaseUrl, parse_url
from extract.core.errors import TidemarkError
from extract.core.state_key import session_option, with_session_option
from extract.core.state_schema import StateSchema

#: How often `--every` may sync: at least a second apart (0s would be a busy loop), at most a week.
MIN_EVERY = timedelta(seconds=1)
MAX_EVERY = timedelta(days=7)
#: The variables of each database's user, password and connect timeout.
_CREDENTIALS = {
    "TIDEMARK_SOURCE": (spec.SOURCE_USER, spec.SOURCE_PASSWORD, spec.SOURCE_CONNECT_TIMEOUT),
    "TIDEMARK_TARGET": (spec.TARGET_USER, spec.TARGET_PASSWORD, spec.TARGET_CONNECT_TIMEOUT),
}


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
    #: How long a new file must keep its size and time to be read (a file source's second listing).
    files_settle: timedelta
    partition_threshold: int
    max_partitions: int
    min_partition_rows: int
    #: Set: cut every this many rows, whatever the threshold (for tests and tuning).
    partition_rows: int | None
    max_parallel_transfers: int
    reconcile: ReconcileSettings
    #: Read here so that a bad value is refused before anything is written; the DDL reads it again.
    lock: LockSettings
    #: The target's schema for tidemark's state (TIDEMARK_STATE_SCHEMA).
    state_schema: StateSchema
    #: A secret (TIDEMARK_STATE_KEY), masked in every message; kept out of repr so that no print of the
    #: settings shows it.
    state_key: str | None = field(repr=False)
    #: How often a failed read of the source is tried again, and the pause before each try.
    read_retries: int
    retry_backoff: timedelta
    catalog_prepone: timedelta = timedelta(hours=3)
    #: reconcile or fail (spec.ON_EXPIRED_VERSION).
    on_expired_version: str = "reconcile"

    @property
    def seeds_dir(self) -> Path:
        return self.project_dir / "seeds"

    @property
    def jvm_log(self) -> Path:
        """Where the driver JVM's own output goes (beside dbt's log), unless --verbose shows it."""
        return self.project_dir / "logs" / "tidemark-jvm.log"


def _with_credentials(url: DatabaseUrl, env: Mapping[str, str], prefix: str) -> DatabaseUrl:
    """The URL with the user and password of PREFIX_USER / PREFIX_PASSWORD; refused when the URL
    names another user or password, since either would silently win over the other."""
    user_setting, password_setting, timeout_setting = _CREDENTIALS[prefix]
    user, password = user_setting.read(env), password_setting.read(env)
    if user and url.user and user != url.user:
        raise TidemarkError(
            f"{prefix}_USER is {user!r} but {prefix}_URL names the user {url.user!r}: set the user in one place"
        )
    if password and url.password and password != url.password:
        raise TidemarkError(f"{prefix}_PASSWORD and the password in {prefix}_URL differ: set the password in one place")
    timeout = timeout_setting.value(env)
    return replace(
        url.with_credentials(user or url.user, password or url.password), connect_timeout=int(timeout.total_seconds())
    )


def dbt_profile_env(target: DatabaseUrl) -> dict[str, str]:
    """The variables the dbt profile (profiles.yml.example) reads, for the target at `target`."""
    return {
        spec.TARGET_HOST.name: target.host,
        spec.TARGET_PORT.name: str(target.port),
        spec.TARGET_USER.name: target.user or "",
        spec.TARGET_PASSWORD.name: target.password or "",
        spec.TARGET_DBNAME.name: target.database,
    }


def _agrees_with_profile(target: DatabaseUrl, env: Mapping[str, str]) -> None:
    """Refuse TIDEMARK_TARGET_URL beside a dbt profile variable that names another server or database:
    the extract would land in one place and dbt merge in another."""
    for setting in (spec.TARGET_HOST, spec.TARGET_PORT, spec.TARGET_DBNAME):  # user and password: _with_credentials
        value, given = dbt_profile_env(target)[setting.name], (setting.given(env) or "").strip()
        if given and given != value:
            raise TidemarkError(
                f"TIDEMARK_TARGET_URL names {setting.name.removeprefix('TIDEMARK_TARGET_').lower()} {value!r} but "
                f"{setting.name} is {given!r}: set the target once, in TIDEMARK_TARGET_URL (dbt is given its parts)"
            )


def target_from_env(env: Mapping[str, str] | None = None) -> DatabaseUrl:
    """TIDEMARK_TARGET_URL, else the variables the dbt profile reads."""
    env = environment(env)
    target = spec.TARGET_URL.read(env)
    if target is not None:
        if target.dialect == "postgres":
            _agrees_with_profile(target, env)
    elif spec.TARGET_HOST.given(env):
        host, port, database = spec.TARGET_HOST.value(env), spec.TARGET_PORT.value(env), spec.TARGET_DBNAME.value(env)
        target = parse_url(f"postgresql://{host}:{port}/{database}")
    else:
        raise TidemarkError(
            "no target database: set TIDEMARK_TARGET_URL (postgresql://HOST:PORT/DB) "
            "or the dbt profile's TIDEMARK_TARGET_HOST/PORT/USER/PASSWORD/DBNAME"
        )
    if target.dialect != "postgres":
        raise TidemarkError(f"the target must be PostgreSQL, not {target.display}")
    key = spec.STATE_KEY.read(env)
    if key is not None:
        # Each session tidemark opens on the target brings the state key (extract/core/state_key.py).
        target = replace(target, session_options=session_option(key))
    return _with_credentials(target, env, "TIDEMARK_TARGET")


def source_from_env(env: Mapping[str, str] | None = None) -> DatabaseUrl:
    env = environment(env)
    return _with_credentials(spec.SOURCE_URL.value(env), env, "TIDEMARK_SOURCE")


def dbt_state_env(state: StateSchema, key: str | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the dbt package reads of the project's state (macros/shared/tidemark_state_schema.sql), and,
    with a state key, PGOPTIONS that brings the key to each of dbt's sessions (libpq reads it). The default
    schema is left unset, as a user's own `dbt run` leaves it: dbt_project.yml reads the variable, and dbt
    parses the whole project again when its value there changes, even to the default's."""
    variables: dict[str, str] = {} if state.is_default else {spec.STATE_SCHEMA.name: state.name}
    if key is not None:
        variables["PGOPTIONS"] = with_session_option(environment(env).get("PGOPTIONS"), key)
    return variables


def state_schema_from_env(env: Mapping[str, str] | None = None) -> StateSchema:
    """The state schema of the project (TIDEMARK_STATE_SCHEMA), for a command that reads only the target."""
    return StateSchema(spec.STATE_SCHEMA.value(environment(env)))


def state_key_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The state key (TIDEMARK_STATE_KEY), a secret: None when none is set."""
    return spec.STATE_KEY.read(environment(env))


def load_settings(
    env: Mapping[str, str] | None = None,
    master: str | None = None,
    safety_window: str | None = None,
    partition_rows: str | None = None,
    parallel: str | None = None,
) -> Settings:
    """The settings of a sync, a reconcile or a command that reads the source; the command line's options
    (--master, --safety-window, --partition-rows, --parallel) win over their variables."""
    env = environment(env)
    spec.SPARK_DRIVER_MEMORY.value(env)  # Spark's launcher would refuse a bad size in a Java stack trace
    return Settings(
        source=source_from_env(env),
        target=target_from_env(env),
        project_dir=project_dir(env),
        gx_root=gx_root(env),
        cursor_candidates=spec.CURSOR_CANDIDATES.value(env),
        spark_master=spec.SPARK_MASTER.value_or(master, "--master", env),
        extra_jars=extra_jars(env),
        read_uncommitted=spec.READ_UNCOMMITTED.value(env),
        safety_window=spec.SAFETY_WINDOW.value_or(safety_window, "--safety-window", env),
        files_settle=spec.FILES_SETTLE.value(env),
        partition_threshold=spec.PARTITION_THRESHOLD.value(env),
        max_partitions=spec.MAX_PARTITIONS.value(env),
        min_partition_rows=spec.MIN_PARTITION_ROWS.value(env),
        partition_rows=(
            spec.PARTITION_ROWS.read(env)
            if partition_rows is None
            else spec.PARTITION_ROWS.parse(partition_rows, "--partition-rows")
        ),
        max_parallel_transfers=spec.MAX_PARALLEL_TRANSFERS.value_or(parallel, "--parallel", env),
        reconcile=reconcile_settings(env),
        lock=lock_settings(env),
        state_schema=state_schema_from_env(env),
        state_key=spec.STATE_KEY.read(env),
        read_retries=spec.READ_RETRIES.value(env),
        retry_backoff=spec.RETRY_BACKOFF.value(env),
        catalog_prepone=spec.CATALOG_PREPONE.value(env),
        on_expired_version=spec.ON_EXPIRED_VERSION.value(env),
    )
