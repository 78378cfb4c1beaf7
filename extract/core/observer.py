"""What a run tells its caller as it goes, for the console and the --json report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Called with an event name and details: "start" or "resume", "watermark", "planned", "partition"
#: (from a watcher thread, as partitions land), "landed", "failed".
Observer = Callable[[str, dict[str, Any]], None]


def silent(event: str, details: dict[str, Any]) -> None:
    return None
