"""What dbt renders and the tables its queries return are the same with extract/runtime/dbt_node_overheads.py
in place: templates compiled once render as dbt's own for every context, a kept type tester types rows
as a new one does, and the one empty result is dbt's empty table."""

from __future__ import annotations

import datetime
from typing import Any

from extract.runtime import dbt_node_overheads

SOURCES = [
    "select {{ column }} from {{ relation }}{% if limit %} limit {{ limit }}{% endif %}",
    "{% for name in names %}{{ name | upper }}{% if not loop.last %}, {% endif %}{% endfor %}",
    "{{ config.get('materialized', 'view') }} {{ undefined_name is defined }}",
    "{{ limit }}",
]
CONTEXTS: list[dict[str, Any]] = [
    {"column": "id", "relation": "a.b", "limit": 3, "names": ["x", "y"], "config": {"materialized": "table"}},
    {"column": "name", "relation": "c.d", "limit": None, "names": [], "config": {}},
]


def _kept_templates(compiles: list[str], debugging: bool) -> dbt_node_overheads.CompiledTemplates:
    """Jinja's own compile, each text it compiles noted in `compiles`, behind the kept templates."""
    from jinja2 import Environment, Undefined

    dbt_compile = getattr(Environment.compile, "__wrapped__", Environment.compile)

    def counted(env: Any, source: Any, *args: Any) -> Any:
        compiles.append(source)
        return dbt_compile(env, source, *args)

    return dbt_node_overheads.CompiledTemplates(counted, lambda: debugging, Undefined)


def test_a_template_compiled_once_renders_as_dbt_s_own_in_every_context() -> None:
    from dbt_common.clients.jinja import get_environment

    compiles: list[str] = []
    kept = _kept_templates(compiles, debugging=False)
    for context in CONTEXTS:
        for native in (False, True):  # text, and dbt's native rendering ("3" against 3)
            for source in SOURCES:
                env = get_environment(native=native)  # a new one each time, as dbt makes them
                theirs = env.from_string(source, globals=context).render(context)
                template = env.template_class.from_code(env, kept(env, source), env.make_globals(context), None)
                assert template.render(context) == theirs and type(template.render(context)) is type(theirs)
    assert len(compiles) == 2 * len(SOURCES)  # once each for either environment, whatever the context

    capturing = get_environment(capture_macros=True)  # dbt's parse: its own undefined, made anew
    kept(capturing, SOURCES[0])
    kept(capturing, SOURCES[0])
    assert len(compiles) == 2 * len(SOURCES) + 2


def test_nothing_is_kept_while_dbt_debugs_its_macros() -> None:
    from dbt_common.clients.jinja import get_environment

    compiles: list[str] = []
    kept = _kept_templates(compiles, debugging=True)
    for _ in range(2):
        kept(get_environment(), SOURCES[0])
    assert len(compiles) == 2


def test_a_kept_type_tester_types_rows_as_a_new_one() -> None:
    import agate
    from dbt_common.clients import agate_helper

    dbt_build = getattr(agate_helper.build_type_tester, "__wrapped__", agate_helper.build_type_tester)
    testers = dbt_node_overheads.TypeTesters(dbt_build)
    rows = [
        [1, "2026-01-02", "null", "x", 1.5, datetime.datetime(2026, 1, 2, 3, 4, 5), True],
        [2, "2026-01-03", "", "y", None, None, False],
    ]
    names = ["n", "d", "maybe", "t", "f", "ts", "b"]
    for text_columns, nulls in [(set(), ()), ({"t", "maybe"}, ()), ({"d"}, ("null", "")), ((), ("null", ""))]:
        kept = testers(text_columns, nulls)
        assert testers(set(text_columns), nulls) is kept  # the same arguments, the same tester
        mine = agate.Table(rows, names, column_types=kept)
        theirs = agate.Table(rows, names, column_types=dbt_build(text_columns, nulls))
        assert [type(kind) for kind in mine.column_types] == [type(kind) for kind in theirs.column_types]
        assert [list(row.values()) for row in mine.rows] == [list(row.values()) for row in theirs.rows]
    assert testers((), ("null", "")) is not testers((), ())


def test_the_kept_empty_result_is_dbt_s_own_empty_table_made_once() -> None:
    import agate
    from dbt_common.clients import agate_helper

    dbt_empty = getattr(agate_helper.empty_table, "__wrapped__", agate_helper.empty_table)
    kept = dbt_node_overheads.kept_empty_table(dbt_empty)
    mine, theirs = kept(), dbt_empty()
    assert kept() is mine
    assert (mine.column_names, mine.column_types, len(mine.rows)) == (theirs.column_names, theirs.column_types, 0)
    # What a caller makes from it is a new table: the kept one stays empty.
    grown = agate.Table.merge([mine, agate.Table([[1]], ["n"])])
    assert (len(grown.rows), len(kept().rows), kept().column_names) == (1, 0, ())
