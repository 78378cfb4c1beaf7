"""Settings read from the environment by commands that need no source or target (init, server, jars),
and by the runtime (the JDK, Spark); and the variables tidemark hands on to the tools it runs. The sync's
own settings are in settings.py; what each variable takes is in spec.py."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from extract.config import spec
from extract.config.setting import environment

#: Where `make install` puts the browser libraries of tidemark's pages (npm ci of extract/report_page).
INSTALLED_ASSETS = Path(sys.prefix) / "report-assets" / "node_modules"


def project_dir(env: Mapping[str, str] | None = None) -> Path:
    """The dbt project: --project-dir, else TIDEMARK_PROJECT_DIR, else the current folder."""
    return spec.PROJECT_DIR.value(env)


def use_project_dir(folder: str) -> None:
    """--project-dir: the project of this command, and of the dbt and Spark it starts (they read the variable)."""
    os.environ[spec.PROJECT_DIR.name] = folder


def gx_root(env: Mapping[str, str] | None = None) -> Path:
    """The folder of the great-expectations project (its gx/ folder): TIDEMARK_GX_ROOT, else the dbt project."""
    return spec.GX_ROOT.read(env) or project_dir(env)


def dbt_profiles_dir(project: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """Where dbt should look for profiles.yml when nobody said: the project's own, if it has one (dbt
    itself looks in the current folder, then ~/.dbt). None when DBT_PROFILES_DIR is set."""
    if spec.DBT_PROFILES_DIR.given(env) or not (project / "profiles.yml").is_file():
        return None
    return project


def extra_jars(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """TIDEMARK_JARS: jars for the source's JDBC driver (e.g. mssql-jdbc), colon-separated."""
    return spec.JARS.read(env) or ()


def java_home(env: Mapping[str, str] | None = None) -> Path | None:
    return spec.JAVA_HOME.read(env)


def tidemark_home(env: Mapping[str, str] | None = None) -> Path:
    """Where the embedded PostgreSQL of the demo and tests keeps its data."""
    return spec.HOME.value(env)


def pg_port(env: Mapping[str, str] | None = None) -> int:
    return spec.PG_PORT.value(env)


def browser_assets(env: Mapping[str, str] | None = None) -> Path:
    """The node_modules that hold the browser libraries of tidemark's pages: TIDEMARK_REPORT_ASSETS, else
    the installed ones."""
    return spec.REPORT_ASSETS.read(env) or INSTALLED_ASSETS


def hand_on(variables: Mapping[str, str]) -> None:
    """Set `variables` for the libraries in this process that read the environment themselves (dbt's profile,
    great-expectations' config) and for every process this one starts."""
    os.environ.update(variables)


def spark_defaults() -> None:
    """Spark's own variables, where the user set none: it binds to loopback, its driver has a heap of 2 GB, and
    its workers run this Python."""
    os.environ.setdefault(spec.SPARK_LOCAL_IP.name, spec.SPARK_LOCAL_IP.default or "127.0.0.1")
    os.environ.setdefault(spec.SPARK_DRIVER_MEMORY.name, spec.SPARK_DRIVER_MEMORY.default or "2g")
    # Workers must use this interpreter, or they miss the packages of this environment.
    os.environ.setdefault(spec.PYSPARK_PYTHON.name, sys.executable)


def with_environment(variables: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with `variables` over it: what a tool it starts would see."""
    return {**environment(), **variables}


def under_spark_submit(env: Mapping[str, str] | None = None) -> bool:
    """Whether spark-submit started this process (its driver JVM waits for it on a gateway port)."""
    return "PYSPARK_GATEWAY_PORT" in environment(env)


def environment_as_held() -> dict[bytes, bytes] | None:
    """The process' environment as Python holds it (encoded), to compare two moments of it cheaply; None
    where Python does not hold it so."""
    held: dict[bytes, bytes] | None = getattr(os.environ, "_data", None)
    return held
