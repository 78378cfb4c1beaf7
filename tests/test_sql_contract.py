"""The extract and the dbt macros agree on the names and values they share (extract/core/sql_contract.py):
the package's macro tidemark_contract returns the same values, and no other macro or model spells one out."""

from __future__ import annotations

import json
import re

from extract.core import sql_contract
from tests.conftest import REPO

JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.S)
PACKAGE = REPO / "dbt_package"
CONTRACT = PACKAGE / "macros" / "shared" / "tidemark_contract.sql"


def test_the_macro_contract_is_the_extracts() -> None:
    code = JINJA_COMMENT.sub("", CONTRACT.read_text())
    literal = re.search(r"set contract = (\{.*?\}) -%\}", code, re.S)
    assert literal is not None
    assert json.loads(literal.group(1)) == sql_contract.MACRO_CONTRACT


def test_no_macro_or_model_spells_out_a_shared_value() -> None:
    values = [v for v in sql_contract.MACRO_CONTRACT.values() if isinstance(v, str)]
    spelled = []
    for path in [*PACKAGE.glob("macros/**/*.sql"), *PACKAGE.glob("models/**/*.sql")]:
        if path == CONTRACT:
            continue
        code = JINJA_COMMENT.sub("", path.read_text())
        spelled += [f"{path.relative_to(REPO)}: {v}" for v in values if v in code]
    assert spelled == []
