"""The extract and the dbt macros agree on the names and values they share (extract/core/sql_contract.py):
dbt_project.yml hands the macros the same values as vars, and no macro or model spells one out."""

from __future__ import annotations

import re

import yaml

from extract.core import sql_contract
from tests.conftest import REPO

JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.S)


def test_dbt_vars_are_the_extracts_values() -> None:
    project = yaml.safe_load((REPO / "dbt_project.yml").read_text())
    assert project["vars"] == sql_contract.DBT_VARS


def test_no_macro_or_model_spells_out_a_shared_value() -> None:
    values = [v for v in sql_contract.DBT_VARS.values() if isinstance(v, str)]
    spelled = []
    for path in [*REPO.glob("macros/**/*.sql"), *REPO.glob("models/state/*.sql")]:
        code = JINJA_COMMENT.sub("", path.read_text())
        spelled += [f"{path.relative_to(REPO)}: {v}" for v in values if v in code]
    assert spelled == []
