"""The dbt profile a project builds with must name the database tidemark lands in.

A project keeps its own dbt_project.yml and profiles.yml; if the profile it names points at
another server or database than TIDEMARK_TARGET_URL, the extract would land rows in one and dbt
would merge (nothing) in the other. The profile is rendered by dbt's own renderer, with the
environment dbt is given, and compared before anything lands.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from extract.config import spec
from extract.config.environment import dbt_profiles_dir
from extract.config.setting import environment
from extract.config.urls import DatabaseUrl
from extract.core.errors import TidemarkError, one_line

#: Names of this machine's loopback interface: the same server whichever is written.
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def _profiles_dir(project: Path, env: Mapping[str, str]) -> Path:
    """Where dbt, given `env`, finds profiles.yml: DBT_PROFILES_DIR, the project's own, else ~/.dbt."""
    return (
        spec.DBT_PROFILES_DIR.read(env)
        or dbt_profiles_dir(project, env)
        or Path(env.get("HOME", "~")).expanduser() / ".dbt"
    )


def profiles_file(project: Path, env: Mapping[str, str]) -> Path:
    """The profiles.yml dbt, given `env`, reads for `project`."""
    return _profiles_dir(project, env) / "profiles.yml"


def profile_output(project: Path, env: Mapping[str, str]) -> tuple[str, str, dict[str, Any]] | None:
    """(profile name, target name, the target's rendered output) dbt would use for `project`, or None
    when the project or its profile cannot be found (dbt then says so itself)."""
    project_file = project / "dbt_project.yml"
    if not project_file.is_file():
        return None
    try:
        name = (yaml.safe_load(project_file.read_text()) or {}).get("profile")
    except yaml.YAMLError as exc:
        raise TidemarkError(f"{project_file}: cannot be read as YAML: {one_line(str(exc))}") from None
    profiles = profiles_file(project, env)
    if not isinstance(name, str) or not profiles.is_file():
        return None
    from dbt.config.profile import Profile, read_profile
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    set_invocation_context(dict(env))
    raw = read_profile(str(profiles.parent))
    if name not in raw:
        raise TidemarkError(f"{project_file} names the profile {name!r}, which {profiles} does not have")
    try:
        target, output = Profile.render_profile(raw[name], name, spec.DBT_TARGET.read(env), ProfileRenderer({}))
    except Exception as exc:  # dbt's own words on a profile it cannot render
        raise TidemarkError(f"{profiles}: profile {name!r}: {one_line(str(exc))}") from None
    return name, target, output


def check_profile(project: Path, target: DatabaseUrl, env: Mapping[str, str] | None = None) -> None:
    """Refuse when the project's dbt profile names another server or database than `target`."""
    env = environment(env)
    found = profile_output(project, env)
    if found is None:
        return
    name, target_name, output = found
    if output.get("type") != "postgres":
        if output.get("type") == "spark":
            return  # the lake's target reads the replicas through JDBC; it merges nothing
        raise TidemarkError(
            f"dbt profile {name!r} target {target_name!r} is {output.get('type')!r}, not postgres: "
            "tidemark merges in PostgreSQL (TIDEMARK_TARGET_URL)"
        )
    host = str(output.get("host", ""))
    port = str(output.get("port", ""))
    database = str(output.get("dbname") or output.get("database") or "")
    same_host = host == target.host or {host, target.host} <= _LOOPBACK
    if not same_host or port != str(target.port) or database != target.database:
        raise TidemarkError(
            f"dbt profile {name!r} target {target_name!r} builds in {host}:{port}/{database}, but "
            f"TIDEMARK_TARGET_URL lands in {target.host}:{target.port}/{target.database}: dbt would merge in "
            "another database than the extract lands in; point both at the same one"
        )
