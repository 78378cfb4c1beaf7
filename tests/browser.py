"""Debian's Chromium, headless, for the tests that open a page: the DOM once its scripts ran, or a
screenshot. No network, no profile of its own beyond the test's folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=15000",
    # Offline whatever the machine can reach: no host name resolves (a test's own server is 127.0.0.1).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def _run(url: str, profile: Path, *extra: str) -> str:
    done = subprocess.run(
        [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def dom(url: str, profile: Path) -> str:
    """The page's DOM after its scripts ran (virtual time, so timers and promises settle)."""
    return _run(url, profile, "--dump-dom")


def screenshot(url: str, profile: Path, path: Path, size: str = "1200,1600") -> Path:
    _run(url, profile, f"--screenshot={path}", f"--window-size={size}")
    assert path.is_file() and path.stat().st_size > 0
    return path
