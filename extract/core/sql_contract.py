"""Names and values that the extract (Python) and the dbt macros (SQL) must agree on.

dbt_project.yml hands the same values to the macros as vars (`tidemark_*`);
tests/test_sql_contract.py checks that the two agree and that no macro or model
spells one out instead of reading its var.
"""

#: Landing tables' own columns: the run that landed a row, and its partition of the run's plan.
RUN_ID_COLUMN = "_tidemark_run_id"
#: (Named "page" since the first staging tables; renaming it would orphan every existing one.)
PARTITION_COLUMN = "_tidemark_page"

#: Advisory lock keys, hashed with hashtext(prefix || table key).
MERGE_LOCK_PREFIX = "tidemark:merge:"
HISTORY_LOCK_PREFIX = "tidemark:history:"

#: Postgres types without an equality operator: compared as their text.
UNCOMPARABLE_TYPES = ("xml", "json")

#: The dbt var that carries each value to the macros.
DBT_VARS = {
    "tidemark_run_id_column": RUN_ID_COLUMN,
    "tidemark_partition_column": PARTITION_COLUMN,
    "tidemark_merge_lock_prefix": MERGE_LOCK_PREFIX,
    "tidemark_history_lock_prefix": HISTORY_LOCK_PREFIX,
    "tidemark_uncomparable_types": list(UNCOMPARABLE_TYPES),
}
