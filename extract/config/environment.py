"""Settings read from the environment by commands that need no source or target (init, server, jars),
and by the runtime (the JDK). The sync's own settings are in settings.py."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from extract.core.errors import TidemarkError

DEFAULT_PG_PORT = 54329


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def project_dir(env: Mapping[str, str] | None = None) -> Path:
    """The dbt project: --project-dir, else TIDEMARK_PROJECT_DIR, else the current folder."""
    return Path(_env(env).get("TIDEMARK_PROJECT_DIR", ".")).resolve()


def gx_root(env: Mapping[str, str] | None = None) -> Path:
    """The folder of the great-expectations project (its gx/ folder): TIDEMARK_GX_ROOT, else the dbt project."""
    given = _env(env).get("TIDEMARK_GX_ROOT", "").strip()
    return Path(given).resolve() if given else project_dir(env)


def dbt_profiles_dir(project: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """Where dbt should look for profiles.yml when nobody said: the project's own, if it has one (dbt
    itself looks in the current folder, then ~/.dbt). None when DBT_PROFILES_DIR is set."""
    if _env(env).get("DBT_PROFILES_DIR") or not (project / "profiles.yml").is_file():
        return None
    return project


def extra_jars(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """TIDEMARK_JARS: jars for the source's JDBC driver (e.g. mssql-jdbc), colon-separated."""
    return tuple(j for j in _env(env).get("TIDEMARK_JARS", "").split(":") if j)


def java_home(env: Mapping[str, str] | None = None) -> Path | None:
    home = _env(env).get("JAVA_HOME")
    return Path(home) if home else None


def tidemark_home(env: Mapping[str, str] | None = None) -> Path:
    """Where the embedded PostgreSQL of the demo and tests keeps its data."""
    return Path(_env(env).get("TIDEMARK_HOME", ".tidemark")).resolve()


def pg_port(env: Mapping[str, str] | None = None) -> int:
    text = _env(env).get("TIDEMARK_PG_PORT", str(DEFAULT_PG_PORT))
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise TidemarkError(f"TIDEMARK_PG_PORT must be a port number (1 to 65535), not {text!r}")
    return int(text)
