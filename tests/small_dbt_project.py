"""A small dbt project of a test's own, on PostgreSQL: its files and a profile beside them."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit


def write_small_project(root: Path, files: dict[str, str], server_url: str, dbname: str, threads: int) -> None:
    """`files` (path: text, `dbt_project.yml` naming profile `small`) under `root`, with `profiles.yml` for
    database `dbname` of the server at `server_url`, schema `s`, `threads` threads."""
    url = urlsplit(server_url)
    profile = (
        f"small:\n  target: dev\n  outputs:\n    dev: {{type: postgres, host: '{url.hostname}', port: {url.port},"
        f" user: '{url.username}', password: '', dbname: {dbname}, schema: s, threads: {threads}}}\n"
    )
    (root / "profiles.yml").write_text(profile)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
