"""What a run tells its caller as it goes, for the console and the --json report: typed events.

A run's record is the run log's (extract/state/run_log.py RunRecord) or the snapshot log's
(extract/asof/log.py SnapshotRecord); events carry it as it stands when they are sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any


@dataclass(frozen=True)
class RunBegan:
    table: str
    run: Any
    resumed: bool
    #: The settings' safety window, for a run that reads changes since a clock reading.
    safety_window: timedelta | None = None


@dataclass(frozen=True)
class ClockRead:
    """The run read the source's clock (or modify id): its output state, should it succeed."""

    table: str
    run: Any


@dataclass(frozen=True)
class Planned:
    table: str
    run: Any


@dataclass(frozen=True)
class PartitionLanded:
    """Sent from a watcher thread, as partitions land."""

    table: str
    run: Any


@dataclass(frozen=True)
class Retrying:
    """A read failed on a transient error and is tried again after `wait`."""

    table: str
    run: Any
    attempt: int
    attempts: int
    wait: timedelta
    error: str


@dataclass(frozen=True)
class Landed:
    table: str
    run: Any


@dataclass(frozen=True)
class Failed:
    table: str
    run: Any


@dataclass(frozen=True)
class Note:
    table: str | None
    text: str


Event = RunBegan | ClockRead | Planned | PartitionLanded | Retrying | Landed | Failed | Note
Observer = Callable[[Event], None]


def silent(event: Event) -> None:
    return None
