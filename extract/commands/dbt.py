"""`python -m extract dbt ARGS`: dbt with ARGS, configured from TIDEMARK_TARGET_URL as the extract is (the
profile's TIDEMARK_TARGET_* variables get the URL's parts), in the project of --project-dir. Its exit
code is dbt's: 0 success, 1 a node failed, 2 dbt could not run."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from extract.config.dbt_profile import check_profile
from extract.config.environment import dbt_profiles_dir, hand_on, project_dir
from extract.config.lock_settings import dbt_lock_env, lock_settings
from extract.config.seed_schema import check_seed_schema
from extract.config.settings import (
    dbt_profile_env,
    dbt_state_env,
    state_key_from_env,
    state_schema_from_env,
    target_from_env,
)
from extract.runtime.dbt_worker import ignore_absent_seed_columns


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if not args or args[0] in {"-h", "--help"}:
        print(f"usage: python -m extract dbt DBT_COMMAND [DBT_OPTIONS...]\n\n{__doc__}")
        return 0 if args else 2
    target = target_from_env()
    state = state_schema_from_env()
    state_env = dbt_state_env(state, state_key_from_env())
    hand_on({**dbt_profile_env(target), **dbt_lock_env(lock_settings()), **state_env})
    project = project_dir()
    check_profile(project, target)
    check_seed_schema(project, state)
    if "--project-dir" not in args:
        args += ["--project-dir", str(project)]
    profiles = dbt_profiles_dir(project)
    if "--profiles-dir" not in args and profiles is not None:
        args += ["--profiles-dir", str(profiles)]
    from dbt.cli.main import dbtRunner  # imported here: it takes a second or two

    ignore_absent_seed_columns()
    result = dbtRunner().invoke(args)
    sys.stdout.flush()
    if result.success:
        return 0
    return 2 if result.exception is not None else 1
