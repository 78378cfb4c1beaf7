"""tidemark's seeds (the tables to sync, the type map, the host aliases) are built into the project's state
schema, where the state model reads them. A project's own dbt_project.yml that pins them to a schema by
name keeps them there when TIDEMARK_STATE_SCHEMA names another: beside another tenant's state, or where
this project's role may not write. Such a pin by name is refused, with the line that follows the setting."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from extract.config import spec
from extract.core.errors import TidemarkError
from extract.core.state_schema import DEFAULT_STATE_SCHEMA, StateSchema

TIDEMARK_SEEDS = ("sync_tables", "type_map", "host_aliases")
FOLLOWING_SETTING = f"+schema: \"{{{{ env_var('{spec.STATE_SCHEMA.name}', '{DEFAULT_STATE_SCHEMA}') }}}}\""


def _schema_in(config: object) -> object:
    """The schema a dbt_project.yml level sets for the seeds under it (None: it sets none)."""
    if not isinstance(config, Mapping):
        return None
    return config.get("+schema", config.get("schema"))


def seed_schema_problem(project_dir: Path, state: StateSchema) -> str | None:
    """One line naming the file and the fix when tidemark's seeds are pinned to another schema than
    `state`; None when they follow the setting (or the project leaves them to tidemark's defaults)."""
    project_file = project_dir / "dbt_project.yml"
    if not project_file.is_file():
        return None
    try:
        project = yaml.safe_load(project_file.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None  # dbt, and init, say what is wrong with the file itself
    seeds = project.get("seeds") if isinstance(project, Mapping) else None
    if not isinstance(seeds, Mapping):
        return None
    scope = seeds.get(project.get("name"))
    for seed in TIDEMARK_SEEDS:
        # The most specific level that sets a schema decides, as dbt's configuration does.
        levels = (scope.get(seed) if isinstance(scope, Mapping) else None, scope, seeds)
        schema = next((found for found in map(_schema_in, levels) if found is not None), None)
        # A name written out; an expression (Jinja) is the project's own, and dbt renders it.
        if isinstance(schema, str) and "{{" not in schema and schema.strip() != state.name:
            return (
                f"{project_file}: the seed {seed} is built in the schema {schema!r}, but the state schema is "
                f"{state.name!r} ({spec.STATE_SCHEMA.name}): set the seeds' schema with `{FOLLOWING_SETTING}`"
            )
    return None


def check_seed_schema(project_dir: Path, state: StateSchema) -> None:
    """Refuse, before anything lands, a project whose seeds would be built outside its state schema."""
    problem = seed_schema_problem(project_dir, state)
    if problem is not None:
        raise TidemarkError(problem)
