"""Three costs dbt 1.11 pays for each node it runs, cut without changing what it renders or returns.

- **Jinja compiles the same text again for every node.** The model's SQL, its hooks and each config
  value with Jinja in it are compiled from text to Python code at every node, in a new environment
  each time, though most are the same text from node to node (the hooks of every replica, say). The
  code depends only on the text and on how the environment is made (its class and extensions), so it
  is kept by those and reused; the template is still made for each node, with that
  node's context. Not while dbt's macro debugging is on, which records each compile.
- **A query's result is typed with new type testers each time.** dbt turns the rows of each query
  into an agate table through a type tester it builds anew for every result, and building one makes
  date and time parsers that cost more than the typing of a few rows. Testers built with the same
  arguments are the same, and are reused.
- **A statement that returns no rows gets a new empty table.** dbt answers each statement it runs
  without fetching (most of a materialization's) with a new empty agate table, about 0.3 ms each: on
  the first pass over 300 tables, 4,800 statements and 1.4 s of the interpreter. An agate table
  cannot be changed (its methods return new tables), so one empty table serves them all.

Sampled in dbt's process on the first pass over 300 tables, the first two were about a sixth of the
time its threads held the interpreter, the third about a twentieth.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from extract.runtime.dbt_replacements import in_place, put_in_place

#: The most compiled templates kept (a project's distinct texts; past it, the oldest half is let go).
MOST_KEPT = 8192


class CompiledTemplates:
    """Jinja's `Environment.compile`, its code kept by the text and the environment's make."""

    def __init__(self, compile_text: Callable[..., Any], debugging: Callable[[], bool], plain: type) -> None:
        self._compile = compile_text
        self._debugging = debugging
        self._plain = plain
        self._kept: dict[tuple[Any, ...], Any] = {}
        self._keeping = threading.Lock()

    def __call__(
        self, env: Any, source: Any, name: Any = None, filename: Any = None, raw: bool = False, defer_init: bool = False
    ) -> Any:
        # An environment that captures undefined names (dbt's parse) is made anew each time: not kept.
        if raw or not isinstance(source, str) or env.undefined is not self._plain or self._debugging():
            return self._compile(env, source, name, filename, raw, defer_init)
        make = (type(env), tuple(sorted(env.extensions)), env.code_generator_class)
        key = (*make, source, name, filename, defer_init)
        code = self._kept.get(key)
        if code is None:
            code = self._compile(env, source, name, filename, raw, defer_init)
            with self._keeping:
                if len(self._kept) >= MOST_KEPT:
                    for old in list(self._kept)[: MOST_KEPT // 2]:
                        del self._kept[old]
                self._kept[key] = code
        return code


class TypeTesters:
    """dbt_common's `build_type_tester`, each tester kept by its arguments."""

    def __init__(self, build: Callable[..., Any]) -> None:
        self._build = build
        self._kept: dict[tuple[Any, ...], Any] = {}

    def __call__(self, text_columns: Iterable[str], string_null_values: Any = ("null", "")) -> Any:
        columns = tuple(sorted(text_columns))
        nulls = None if string_null_values is None else tuple(string_null_values)
        key = (columns, nulls)
        tester = self._kept.get(key)
        if tester is None:
            tester = self._build(columns, string_null_values)
            if len(self._kept) < MOST_KEPT:
                self._kept[key] = tester
        return tester


def kept_empty_table(make_empty: Callable[[], Any]) -> Callable[[], Any]:
    """dbt_common's `empty_table`, made once."""
    empty = make_empty()

    def empty_table() -> Any:
        return empty

    return empty_table


def install() -> None:
    """Put the three in place of dbt's own, in the process that runs dbt (dbt imported)."""
    from dbt_common.clients import agate_helper, jinja
    from jinja2 import Environment, Undefined

    if in_place(Environment.compile):
        return
    templates = CompiledTemplates(Environment.compile, lambda: bool(jinja.MACRO_DEBUGGING), Undefined)

    def compile_kept(
        env: Any, source: Any, name: Any = None, filename: Any = None, raw: bool = False, defer_init: bool = False
    ) -> Any:
        return templates(env, source, name, filename, raw, defer_init)

    replacements: list[tuple[Any, str, Any]] = [
        (Environment, "compile", compile_kept),
        (agate_helper, "build_type_tester", TypeTesters(agate_helper.build_type_tester)),
        (agate_helper, "empty_table", kept_empty_table(agate_helper.empty_table)),
    ]
    put_in_place(replacements)
