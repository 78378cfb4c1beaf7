"""`--dbt ARGS` of a sync or a reconcile: dbt in a helper process of the pass's, configured from
TIDEMARK_TARGET_URL."""

from __future__ import annotations

from extract.config.dbt_profile import check_profile
from extract.config.environment import hand_on
from extract.config.lock_settings import dbt_lock_env
from extract.config.seed_schema import check_seed_schema
from extract.config.setting import environment
from extract.config.settings import Settings, dbt_profile_env, dbt_state_env
from extract.runtime.dbt import DbtProcess
from extract.runtime.dbt_check_record import fingerprint
from extract.state.seeds_loaded import unloaded_seeds_hint


def dbt_process(
    dbt_args: list[str] | None, settings: Settings, parse_now: bool = True, import_ahead: bool = False
) -> DbtProcess | None:
    """dbt with `dbt_args` (None: no dbt), imported by its own process once asked to (aside, ahead of a
    pass of many tables, with `import_ahead`), and its project parsed there from now on (`parse_now`) or
    once it is prepared (DbtProcess.prepare). dbt's profile reads the target's parts, so
    TIDEMARK_TARGET_URL alone configures both; a project whose profile builds in another database is
    refused before anything lands."""
    if dbt_args is None:
        return None
    hand_on(
        {
            **dbt_profile_env(settings.target),
            **dbt_lock_env(settings.lock),
            **dbt_state_env(settings.state_schema, settings.state_key),
        }
    )
    check_seed_schema(settings.project_dir, settings.state_schema)
    # The profile is rendered by dbt's own code, whose import takes seconds: in dbt's process, and its
    # refusal raised before anything lands (DbtProcess.check_arguments).
    return DbtProcess(
        dbt_args,
        settings.project_dir,
        parse_now,
        import_ahead,
        preflight=lambda: check_profile(settings.project_dir, settings.target),
        # A record of the last check that passed lets a pass with nothing to land skip waiting for dbt's import.
        fingerprint=lambda args: fingerprint(args, settings.project_dir, settings.target, environment()),
        # A run that loads no seeds fails on the state model in a project whose seeds were never loaded.
        failure_hint=lambda: unloaded_seeds_hint(settings.target, settings.state_schema),
    )
