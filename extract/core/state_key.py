"""How a session brings the state key (TIDEMARK_STATE_KEY): as the custom setting tidemark.state_key, set when
it connects (libpq's `options`; PGOPTIONS for the dbt tidemark runs or a user runs), never in the text of a
statement. The state schema's functions read it (extract/state/schema.sql, tidemark_state_key)."""

from __future__ import annotations

import re

KEY_SETTING = "tidemark.state_key"
#: What libpq takes literally in `options` only when escaped: whitespace separates options.
_SEPARATING = re.compile(r"(\s|\\)")


def session_option(key: str) -> str:
    """The `options` (or PGOPTIONS) entry that sets the key for a session."""
    return f"-c {KEY_SETTING}=" + _SEPARATING.sub(r"\\\1", key)


def with_session_option(options: str | None, key: str) -> str:
    """`options` (a user's PGOPTIONS, say) with the key's entry after them."""
    return " ".join(part for part in (options, session_option(key)) if part)
