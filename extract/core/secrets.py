"""Secrets never reach a message: every password tidemark reads is registered here, and every line
it prints or logs passes through `mask`, which also hides a password written in a URL it never parsed."""

from __future__ import annotations

import re
import threading

MASK = "***"
_known: set[str] = set()
_lock = threading.Lock()

#: `scheme://user:PASSWORD@host`: the password runs to the last `@` of the authority (it may hold
#: `#`, `/`, `?` or `@` unencoded).
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-:]*://[^:/@\s\[\]]*:)(?P<secret>\S*)@")
#: `password=VALUE` in a JDBC or libpq URL or a DSN: braced (`{a;b}}c}`, `}}` is an escaped `}`),
#: quoted, or up to the next separator.
_PASSWORD_PROPERTY = re.compile(
    r"(?P<head>(?i:password|pwd|sslpassword)\s*=\s*)(?P<secret>\{(?:[^}]|\}\})*\}?|'(?:[^'\\]|\\.)*'?|[^;&\s]*)"
)


def register(secret: str | None) -> None:
    """Remember a password (from a URL or the environment) so that no message shows it."""
    if secret:
        with _lock:
            _known.add(secret)


def mask(text: str) -> str:
    """`text` with every registered secret and every password written in a URL replaced by ***."""
    text = _USERINFO.sub(lambda m: m.group("head") + MASK + "@", text)
    text = _PASSWORD_PROPERTY.sub(lambda m: m.group("head") + MASK, text)
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, MASK)
    return text
