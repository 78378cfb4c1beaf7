"""Durations as the command line and the environment write them: 90s, 5m, 1.5h, 7d."""

from __future__ import annotations

import re
from datetime import timedelta

from extract.core.errors import TidemarkError

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(?P<amount>\d{1,12}(?:\.\d{1,9})?)(?P<unit>ms|s|m|h|d)$")
#: The longest safety window: a month of re-reading is a full read in all but name.
MAX_SAFETY_WINDOW = timedelta(days=31)


def parse_duration(
    text: str, name: str, minimum: timedelta = timedelta(0), maximum: timedelta = MAX_SAFETY_WINDOW
) -> timedelta:
    """'90s', '5m', '1.5h', '0s' -> timedelta, from `minimum` to `maximum`; anything else is an error
    that names the value."""
    match = _DURATION.match(text.strip().lower())
    if not match:
        raise TidemarkError(f"{name} must be a duration such as 0s, 90s, 5m or 1h, not {text!r}")
    seconds = float(match.group("amount")) * _UNITS[match.group("unit")]
    if not minimum.total_seconds() <= seconds <= maximum.total_seconds():
        raise TidemarkError(
            f"{name} must be from {spoken_duration(minimum)} to {spoken_duration(maximum)}, not {text!r}"
        )
    return timedelta(seconds=seconds)


def spoken_duration(duration: timedelta) -> str:
    """A duration as it would be written on the command line: 90s, 5m, 1.5h, 7d."""
    seconds = duration.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
