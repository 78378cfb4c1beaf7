"""Settings are one typed specification (extract/config/spec.py), read in the config package only: each
names its type, default and meaning, a bad value is refused naming it (exit code 2), a secret is masked,
and docs/settings.md lists them all."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from extract.config.lock_settings import dbt_lock_env
from extract.config.settings import load_settings
from extract.config.spec import SETTINGS
from extract.core.errors import TidemarkError
from extract.core.secrets import mask
from tests.conftest import REPO

PACKAGE = REPO / "extract"
BASE = {"TIDEMARK_SOURCE_URL": "jdbc:sqlserver://db01;databaseName=App", "TIDEMARK_TARGET_HOST": "pg01"}


def test_every_setting_is_named_once_documented_and_its_default_parses() -> None:
    names = [setting.name for setting in SETTINGS]
    assert len(names) == len(set(names)) >= 50
    for setting in SETTINGS:
        assert setting.doc and setting.kind, setting.name
        if setting.default is not None:
            setting.parse(setting.default, setting.name)


def test_the_state_retry_settings_default_and_parse() -> None:
    defaults = load_settings(BASE)
    assert (defaults.state_schema.name, defaults.state_key) == ("_migration", None)
    assert (defaults.read_retries, defaults.retry_backoff) == (3, timedelta(seconds=1))
    given = load_settings(
        {
            **BASE,
            "TIDEMARK_STATE_SCHEMA": "tidemark_state",
            "TIDEMARK_READ_RETRIES": "0",
            "TIDEMARK_RETRY_BACKOFF": "1.5s",
        }
    )
    assert (given.state_schema.name, given.read_retries, given.retry_backoff) == (
        "tidemark_state",
        0,
        timedelta(seconds=1.5),
    )
    assert load_settings({**BASE, "TIDEMARK_STATE_SCHEMA": "s" * 63}).state_schema.name == "s" * 63


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("TIDEMARK_STATE_SCHEMA", "Has Space", "TIDEMARK_STATE_SCHEMA must be a PostgreSQL schema name"),
        ("TIDEMARK_STATE_SCHEMA", "Upper", "TIDEMARK_STATE_SCHEMA must be a PostgreSQL schema name"),
        ("TIDEMARK_STATE_SCHEMA", "s" * 64, "of 1 to 63 bytes"),
        ("TIDEMARK_STATE_SCHEMA", "1st", "not starting with a digit or pg_"),
        ("TIDEMARK_STATE_SCHEMA", "pg_state", "not starting with a digit or pg_"),
        ("TIDEMARK_STATE_SCHEMA", "état", "of 1 to 63 bytes"),
        ("TIDEMARK_STATE_SCHEMA", "state\n", "TIDEMARK_STATE_SCHEMA must be a PostgreSQL schema name"),
        ("TIDEMARK_READ_RETRIES", "21", "TIDEMARK_READ_RETRIES must be a whole number from 0 to 20"),
        ("TIDEMARK_READ_RETRIES", "-1", "TIDEMARK_READ_RETRIES must be a whole number from 0 to 20"),
        ("TIDEMARK_READ_RETRIES", "²", "TIDEMARK_READ_RETRIES must be a whole number from 0 to 20"),
        ("TIDEMARK_READ_RETRIES", "_", "TIDEMARK_READ_RETRIES must be a whole number from 0 to 20"),
        ("TIDEMARK_RETRY_BACKOFF", "soon", "TIDEMARK_RETRY_BACKOFF must be a duration such as"),
        ("TIDEMARK_RETRY_BACKOFF", "11m", "TIDEMARK_RETRY_BACKOFF must be from 0s to 10m"),
        # Settings read before, with the messages they gave.
        ("TIDEMARK_LOCK_ATTEMPTS", "0", "TIDEMARK_LOCK_ATTEMPTS must be a whole number from 1 to 20"),
        ("TIDEMARK_RECONCILE_FACTOR", "3", "TIDEMARK_RECONCILE_FACTOR must be a power of two from 2 to 1024"),
        ("TIDEMARK_RECONCILE_MAX_DELETE_SHARE", "200%", "must be a share of the replica such as 10% or 0.1"),
        ("TIDEMARK_RECONCILE_DRIVER_ROWS", "-5", "TIDEMARK_RECONCILE_DRIVER_ROWS must be a whole number of rows"),
        ("TIDEMARK_RECONCILE_PAIRS_ROWS", "10", "must be a whole number from 1,000 to 100,000,000"),
        ("MAX_PARTITIONS_PER_TABLE", "0", "MAX_PARTITIONS_PER_TABLE must be a whole number from 1 to 1,000,000,000"),
        ("TIDEMARK_READ_UNCOMMITTED", "maybe", "must be 1/true/yes/on or 0/false/no/off"),
        ("TIDEMARK_SPARK_MASTER", "nope", "TIDEMARK_SPARK_MASTER 'nope' is not a Spark master URL"),
        ("TIDEMARK_TARGET_PORT", "abc", "TIDEMARK_TARGET_PORT must be a port number from 1 to 65535"),
        ("SPARK_DRIVER_MEMORY", "lots", "SPARK_DRIVER_MEMORY must be a size as Java takes it, such as 2g or 512m"),
        ("TIDEMARK_MERGE_TIMEOUT", "8d", "TIDEMARK_MERGE_TIMEOUT must be from 0s to 7d"),
        ("DATE_UPDATED_FIELD", " , ", "DATE_UPDATED_FIELD is set to ' , ', which names no column"),
    ],
)
def test_a_bad_value_is_refused_naming_it(name: str, text: str, message: str) -> None:
    with pytest.raises(TidemarkError) as refused:
        load_settings({**BASE, name: text})
    assert message in str(refused.value) and repr(text) in str(refused.value)
    assert refused.value.exit_code == 2


def test_a_blank_setting_takes_its_default() -> None:
    settings = load_settings({**BASE, "TIDEMARK_STATE_SCHEMA": " ", "TIDEMARK_LOCK_ATTEMPTS": ""})
    assert (settings.state_schema.name, settings.lock.attempts) == ("_migration", 4)


def test_the_state_key_is_a_secret_never_shown() -> None:
    key = "k3y-Not-For-Eyes"
    settings = load_settings({**BASE, "TIDEMARK_STATE_KEY": key})
    assert settings.state_key == key
    assert key not in repr(settings) and key not in str(settings)
    assert mask(f"the key is {key}.") == "the key is ***."


def test_a_bad_setting_stops_the_command_with_exit_code_2(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", **BASE, "TIDEMARK_PROJECT_DIR": str(tmp_path), "TIDEMARK_STATE_SCHEMA": "pg_x"}
    done = subprocess.run(
        [sys.executable, "-m", "extract", "--all"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert "TIDEMARK_STATE_SCHEMA must be a PostgreSQL schema name" in done.stderr and "'pg_x'" in done.stderr
    assert "Traceback" not in done.stderr


def _reads_the_environment(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "environb"}:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"{path.relative_to(REPO)}:{node.lineno}" for a in node.names if a.name in {"environ", "getenv"}]
    return found


def test_only_the_config_package_reads_the_environment() -> None:
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if p.parent != PACKAGE / "config"]
    assert [line for path in outside for line in _reads_the_environment(path)] == []


def test_every_variable_dbt_reads_is_specified() -> None:
    files = [REPO / "profiles.yml.example", *sorted((REPO / "dbt_package").rglob("*.sql"))]
    read = {name for path in files for name in re.findall(r"env_var\(\s*['\"](\w+)['\"]", path.read_text())}
    assert read and read <= {setting.name for setting in SETTINGS}


def test_dbt_is_handed_a_timeout_only_where_its_own_default_would_differ() -> None:
    """A variable the merge's macros read that the command sets and a user's shell does not makes dbt parse
    every replica again on each switch between them (tests/test_extract_then_dbt.py)."""
    defaults = load_settings(BASE).lock
    assert dbt_lock_env(defaults, {}) == {}
    # Set in the environment (for a user's own dbt, say): the command's own setting is what its dbt reads.
    assert dbt_lock_env(defaults, {"TIDEMARK_LOCK_TIMEOUT_MS": "900"}) == {"TIDEMARK_LOCK_TIMEOUT_MS": "5000"}
    given = load_settings({**BASE, "TIDEMARK_LOCK_TIMEOUT": "2s", "TIDEMARK_MERGE_TIMEOUT": "10m"}).lock
    assert dbt_lock_env(given, {}) == {"TIDEMARK_LOCK_TIMEOUT_MS": "2000", "TIDEMARK_MERGE_TIMEOUT_MS": "600000"}


def test_the_settings_page_lists_every_setting_as_specified() -> None:
    page = (REPO / "docs" / "settings.md").read_text()
    for setting in SETTINGS:
        default = "" if setting.default is None else f"`{setting.default}`"
        secret = " (secret: masked)" if setting.secret else ""
        row = f"| `{setting.name}` | {setting.reader} | {setting.kind} | {default} | {setting.doc}{secret} |"
        assert row in page, row
