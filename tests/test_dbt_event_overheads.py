"""dbt's events, log lines and file log are the same with extract/runtime/dbt_event_overheads.py in place:
each event of a real `dbt build` on PostgreSQL built both ways, the secrets found, the file rolled over."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

import psycopg
import pytest

from extract.runtime import dbt_event_overheads
from tests.small_dbt_project import write_small_project

FILES = {
    "dbt_project.yml": "name: small\nversion: '1.0.0'\nprofile: small\n",
    "seeds/codes.csv": "code,label\n1,one\n2,two\n",
    "models/labels.sql": "select code, upper(label) as label from {{ ref('codes') }}",
    "models/counted.sql": (
        "{{ config(materialized='incremental', unique_key='code') }}\n"
        "select code, label from {{ ref('labels') }}"
        "{% if is_incremental() %} where code > (select max(code) from {{ this }}){% endif %}"
    ),
    "models/schema.yml": (
        "version: 2\nmodels:\n  - name: labels\n    meta: {owner: {team: data, on_call: [a, b]}, tier: 1}\n"
        "    columns:\n      - name: code\n        data_tests: [not_null, unique]\n"
    ),
    "snapshots/labels_history.yml": (
        "snapshots:\n  - name: labels_history\n    relation: ref('labels')\n"
        "    config: {strategy: check, unique_key: code, check_cols: all}\n"
    ),
    "tests/no_blank_label.sql": "select * from {{ ref('labels') }} where label = ''",
}


def _dbt_s_own(owner: Any, name: str) -> Any:
    found = getattr(owner, name)
    return getattr(found, "__wrapped__", found)


@pytest.fixture(scope="module")
def built(pg_admin_url: str, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, dict[str, Any]]]:
    """Every event a `dbt build` of a small project made (twice: the second run is incremental), with
    the fields it was made of, made by dbt's own code."""
    from dbt.cli.main import dbtRunner
    from dbt_common.events.base_types import BaseEvent

    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute("drop database if exists event_overheads with (force)")
        admin.execute("create database event_overheads")
    root = tmp_path_factory.mktemp("events")
    write_small_project(root, FILES, pg_admin_url, "event_overheads", threads=2)
    made: list[tuple[Any, dict[str, Any]]] = []
    dbt_init = _dbt_s_own(BaseEvent, "__init__")

    def recording(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append((self, dict(kwargs)))
        dbt_init(self, *args, **kwargs)

    installed = BaseEvent.__init__
    BaseEvent.__init__ = recording  # type: ignore[method-assign]
    try:
        for _ in range(2):
            args = ["build", "--project-dir", str(root), "--profiles-dir", str(root), "--log-path", str(root)]
            result = dbtRunner().invoke(args)
            assert result.success, result.exception
    finally:
        BaseEvent.__init__ = installed  # type: ignore[method-assign]
    return made


def test_every_event_of_a_build_is_built_as_dbt_builds_it(built: list[tuple[Any, dict[str, Any]]]) -> None:
    from dbt_common.events.base_types import BaseEvent

    dbt_init = _dbt_s_own(BaseEvent, "__init__")
    left_to_dbt: list[str] = []

    def dbt_s_own_init(self: Any, *args: Any, **kwargs: Any) -> None:
        left_to_dbt.append(type(self).__name__)
        dbt_init(self, *args, **kwargs)

    ours = dbt_event_overheads.event_init(dbt_s_own_init)
    kinds = {type(event).__name__ for event, _ in built}
    assert {"SQLQuery", "SQLQueryStatus", "NodeStart", "NodeFinished", "LogSnapshotResult"} <= kinds
    for event, fields in built:
        ours(event, **dict(fields))
        mine = event.pb_msg.SerializeToString(deterministic=True)
        dbt_init(event, **dict(fields))
        assert mine == event.pb_msg.SerializeToString(deterministic=True), type(event).__name__
    # Built by the message's constructor but for a few (a node's timing is given as text to parse).
    assert len(built) > 300 and len(left_to_dbt) * 10 < len(built)


def test_every_message_of_a_build_is_dbt_s_own_but_for_its_moment(built: list[tuple[Any, dict[str, Any]]]) -> None:
    from dbt_common.events.base_types import EventLevel, msg_from_base_event

    for event, _ in built:
        for level in (None, EventLevel.WARN):
            mine, theirs = dbt_event_overheads.event_message(event, level), msg_from_base_event(event, level)
            assert abs(mine.info.ts.ToMicroseconds() - theirs.info.ts.ToMicroseconds()) < 1_000_000
            assert mine.info.ts.nanos % 1000 == 0  # to the microsecond, as dbt's
            mine.info.ClearField("ts")
            theirs.info.ClearField("ts")
            assert mine.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)


def test_the_secrets_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from dbt_common.exceptions import env_secrets

    secrets = dbt_event_overheads.EnvironmentSecrets(env_secrets)
    monkeypatch.setenv("DBT_ENV_SECRET_ONE", "first-secret")
    assert "first-secret" in secrets() and secrets() == env_secrets()
    monkeypatch.setenv("DBT_ENV_SECRET_TWO", "second-secret")
    assert {"first-secret", "second-secret"} <= set(secrets()) and secrets() == env_secrets()
    monkeypatch.delenv("DBT_ENV_SECRET_ONE")
    monkeypatch.setenv("DBT_ENV_SECRET_TWO", "changed")
    assert secrets() == env_secrets() and "first-secret" not in secrets() and "changed" in secrets()


def _write(handler: logging.Handler, lines: Iterator[str]) -> None:
    handler.setFormatter(logging.Formatter(fmt="%(message)s"))
    for line in lines:
        handler.handle(logging.LogRecord("dbt", logging.DEBUG, __file__, 1, line, None, None))
    handler.close()


def _lines() -> Iterator[str]:
    return (f"line {number} " + "é" * (number % 7) + "x" * (number % 50) for number in range(400))


@pytest.mark.parametrize("lines", ["uneven", "of ten bytes"])
def test_the_file_log_rolls_over_where_dbt_s_own_does(tmp_path: Path, lines: str) -> None:
    for folder, kind in (("theirs", RotatingFileHandler), ("mine", dbt_event_overheads.SizedRotatingFileHandler)):
        (tmp_path / folder).mkdir()
        limit = 2000 if lines == "uneven" else 100
        handler = kind(str(tmp_path / folder / "dbt.log"), encoding="utf8", maxBytes=limit, backupCount=5)
        _write(handler, _lines() if lines == "uneven" else (f"line {n:04}" for n in range(400)))
    theirs = {path.name: path.read_bytes() for path in (tmp_path / "theirs").iterdir()}
    assert len(theirs) == 6  # rolled over, five kept
    assert {path.name: path.read_bytes() for path in (tmp_path / "mine").iterdir()} == theirs

    device = tmp_path / "device.log"
    device.symlink_to(os.devnull)
    _write(dbt_event_overheads.SizedRotatingFileHandler(str(device), maxBytes=10, backupCount=5), _lines())
    assert sorted(path.name for path in tmp_path.iterdir()) == ["device.log", "mine", "theirs"]  # never rolled
