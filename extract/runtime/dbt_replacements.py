"""dbt's own functions replaced in the process that runs dbt, each keeping the one it replaces, so that
putting them in place twice is harmless and a test can reach dbt's own."""

from __future__ import annotations

from typing import Any

#: Marks a replacement put in place.
_INSTALLED = "_tidemark_installed"
#: Where a replacement keeps dbt's own function, as functools.wraps keeps the function it wraps.
_ORIGINAL = "__wrapped__"


def in_place(found: Any) -> bool:
    """Whether `found` (an attribute as it is now) is one of these replacements."""
    return bool(getattr(found, _INSTALLED, False))


def put_in_place(replacements: list[tuple[Any, str, Any]]) -> None:
    """Each (owner, name, replacement): the replacement, keeping the owner's own, set as its name."""
    for owner, name, replacement in replacements:
        function = getattr(replacement, "__func__", replacement)  # a classmethod's function keeps them
        setattr(function, _INSTALLED, True)
        setattr(function, _ORIGINAL, getattr(owner, name))
        setattr(owner, name, replacement)
