"""The quoting functions give back exactly what they were given, whatever it holds."""

from __future__ import annotations

from pathlib import Path

from dbt.clients.jinja import get_rendered
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jinja2.sandbox import SandboxedEnvironment
from pyspark.sql import SparkSession

from extract.config.seeds import read_sync_tables
from extract.core.quoting import dbt_text, jinja_string
from tests.conftest import REPO

HOSTILE = ["{{ run_query('select 1') }}", "{% if %}", "{#", "}}", "x'~y~'", "a\\nb", "\\", "$$", "x\n", "é名🙂"]


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec="utf-8"), min_size=1, max_size=40) | st.sampled_from(HOSTILE))
@example("{{ run_query(\"select setval('canary_seq',77)\") }}")
def test_dbt_renders_the_text_back_to_the_value(value: str) -> None:
    text = dbt_text(value)
    assert get_rendered(text, {}, native=True) == value  # YAML names, configs
    assert get_rendered(text, {}, native=False) == value  # descriptions, test arguments


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(HOSTILE))
def test_a_jinja_string_literal_evaluates_to_the_value(value: str) -> None:
    literal = jinja_string(value)
    assert SandboxedEnvironment().from_string("{{ " + literal + " }}").render() == value
    assert "'" not in literal[1:-1] and "{" not in literal and "}" not in literal


SPARK_HOSTILE = ["${env:HOME}", "${spark.app.name}", "$${x}", "it's", "\\'", "a\\", "\\u0024", "`x`", "--", "\n;"]


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30) | st.sampled_from(SPARK_HOSTILE))
@example("${env:HOME}")
def test_a_spark_string_literal_reads_back_as_the_value(spark: SparkSession, value: str) -> None:
    # Spark substitutes ${...} in the statement's text before it parses it: a "$" must not reach it.
    macro = (REPO / "dbt_package" / "macros" / "shared" / "tidemark_spark_string.sql").read_text()
    literal = SandboxedEnvironment().from_string(macro + "{{ tidemark_spark_string(value) }}").render(value=value)
    assert spark.sql(f"select {literal} as value").collect()[0][0] == value


def test_a_seed_with_a_byte_order_mark_reads_as_written(tmp_path: Path) -> None:
    (tmp_path / "sync_tables.csv").write_bytes(
        "\ufeffsource_schema,source_table,cursor_column\ndbo, Spaced Name ,\n".encode()
    )
    tables = read_sync_tables(tmp_path)
    assert [(t.source_schema, t.source_table, t.cursor_column) for t in tables] == [("dbo", " Spaced Name ", None)]
