"""The demo's file drops: a day's product returns exported as a CSV file, as a vendor's system would drop
them in a shared folder (seeds/file_sources.csv replicates the folder as files.returns)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

HEADER = "ReturnId,OrderId,Reason,Amount,ReturnedAt\n"
REASONS = ("damaged", "wrong size", "not as described", "late delivery", "changed mind")
FIRST_DAY = date(2026, 11, 1)
PER_DAY = 25


def _day_file(folder: Path, day: int, rng: random.Random) -> Path:
    on = FIRST_DAY + timedelta(days=day)
    lines = [
        f"{day * 1000 + n},{rng.randrange(1, 5000)},{rng.choice(REASONS)},{rng.randrange(100, 50000) / 100:.2f},"
        f"{on.isoformat()} {rng.randrange(8, 20):02d}:{rng.randrange(60):02d}:00\n"
        for n in range(1, PER_DAY + 1)
    ]
    path = folder / f"returns-{on.isoformat()}.csv"
    path.write_text(HEADER + "".join(lines))
    return path


def drop_first_days(folder: Path, days: int = 3) -> list[Path]:
    """A new folder holding the first `days` days' files."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("returns-*.csv"):
        old.unlink()
    rng = random.Random(days)
    return [_day_file(folder, day, rng) for day in range(days)]


def drop_next_day(folder: Path, seed: int) -> list[Path]:
    """The next day's file, and the first day's exported again with one return corrected."""
    rng = random.Random(seed)
    days = len(list(folder.glob("returns-*.csv")))
    new = _day_file(folder, days, rng)
    first = folder / f"returns-{FIRST_DAY.isoformat()}.csv"
    lines = first.read_text().splitlines(keepends=True)
    if len(lines) > 1:
        fields = lines[1].rstrip("\n").split(",")
        fields[3] = f"{float(fields[3]) / 2:.2f}"  # a partial refund, corrected by the vendor
        lines[1] = ",".join(fields) + "\n"
        first.write_text("".join(lines))
    return [new, first]
