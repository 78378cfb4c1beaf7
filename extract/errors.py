"""Errors a user can act on: each names the bad value and what to do about it."""


class TidemarkError(Exception):
    """An error caused by input or configuration; printed without a traceback."""

    exit_code = 2


class SourceError(TidemarkError):
    """The source database refused or lacks what we need."""

    exit_code = 3


class MergeError(TidemarkError):
    """The staged batch cannot be merged as it is."""

    exit_code = 4


def first_line(exc: BaseException) -> str:
    """What a summary shows of an error: its message's first line (a JDBC error's stack trace follows it)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
