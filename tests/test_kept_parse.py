"""The parse a pass keeps for the next (extract/runtime/dbt_parse_cache.py) is read only for the project,
environment and dbt setup it was made from, as they were when dbt parsed."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from extract.runtime.dbt_parse_cache import ParseCache
from extract.runtime.dbt_project_files import project_files


@dataclass
class Parsed:
    """What the cache keeps of a manifest: a dataclass's fields, and the environment variables read."""

    env_vars: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    (tmp_path / "models").mkdir()
    path = tmp_path / "models" / "a.sql"
    path.write_text("select 1")
    return path


def _edit(path: Path, text: str) -> None:
    """`text` in `path`, its modification time a second later than before (a coarse clock cannot hide it)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_a_kept_parse_is_read_while_nothing_it_was_parsed_from_changed(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = model.parent.parent
    cache = ParseCache(project, ["build", "--vars", "{a: 1}"], "setup")
    parsed = Parsed({"TIDEMARK_X": "1"}, {"model.a": "a"})
    monkeypatch.setenv("TIDEMARK_X", "1")
    stamp = cache.stamp(parsed, project_files(project))
    assert stamp is not None
    cache.save(parsed, stamp)
    assert cache.load(project_files(project)) == parsed

    monkeypatch.setenv("TIDEMARK_X", "2")  # a variable the parse read
    assert cache.load(project_files(project)) is None
    monkeypatch.setenv("TIDEMARK_X", "1")
    monkeypatch.setenv("DBT_STATIC_PARSER", "false")  # one of dbt's flags
    assert cache.load(project_files(project)) is None
    monkeypatch.delenv("DBT_STATIC_PARSER")
    assert ParseCache(project, ["build", "--vars", "{a: 2}"], "setup").load(project_files(project)) is None
    assert ParseCache(project, ["build", "--vars", "{a: 1}"], "other setup").load(project_files(project)) is None
    assert ParseCache(project, ["build", "--vars", "{a: 1}"], None).load(project_files(project)) is None
    _edit(model, "select 2")
    assert cache.load(project_files(project)) is None


def test_a_file_edited_while_dbt_ran_is_a_change_to_the_next_pass(model: Path) -> None:
    project = model.parent.parent
    cache = ParseCache(project, ["build"], "setup")
    parsed = Parsed()
    stamp = cache.stamp(parsed, project_files(project))  # as dbt parses
    assert stamp is not None
    _edit(model, "select 2")  # while dbt runs, before the parse is kept
    cache.save(parsed, stamp)
    assert cache.load(project_files(project)) is None
