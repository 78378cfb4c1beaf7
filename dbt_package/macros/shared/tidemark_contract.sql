{#-
  The names and values the macros share with the extract, by name: extract/core/sql_contract.py
  (MACRO_CONTRACT) holds the same, and tests/test_sql_contract.py checks that the two agree. A
  macro, not vars: the package's own vars would not reach its macros when a model of the user's
  project calls them.
-#}
{% macro tidemark_contract(name) -%}
    {%- set contract = {
        "run_id_column": "_tidemark_run_id",
        "partition_column": "_tidemark_page",
        "merge_lock_prefix": "tidemark:merge:",
        "history_lock_prefix": "tidemark:history:",
        "uncomparable_types": [
            "xml",
            "json"
        ],
        "tombstone_prefix": "del__",
        "changed_keys_prefix": "chg__",
        "first_sync_record": "tidemark first sync of run ",
        "key_hash_column": "_tidemark_key_hash",
        "row_hash_column": "_tidemark_row_hash",
        "history_suffix": "__history",
        "pattern_wildcards": "*?[",
        "lock_timeout_ms": 5000,
        "merge_timeout_ms": 3600000,
        "default_state_schema": "_migration",
        "lock_scope_mark": "@"
    } -%}
    {{ return(contract[name]) }}
{%- endmacro %}
