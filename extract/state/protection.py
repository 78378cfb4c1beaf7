"""Key values the state keeps (deleted keys, key changes, partition positions), encrypted with the state key.

With TIDEMARK_STATE_KEY set, the state schema is protected by it on the first run: pgcrypto is created in
the target if it is not there, and the schema's state_protection row holds a text encrypted with the key.
From then on the schema's tidemark_protect encrypts what the logs keep and tidemark_reveal decrypts it
(extract/state/schema.sql); the key reaches them as a session setting (extract/core/state_key.py).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from extract.core.errors import TidemarkError, first_line
from extract.core.state_schema import StateSchema
from extract.state.run_log import ddl_lock_sql

#: What `state` and `status` show for a key value they cannot decrypt.
ENCRYPTED = "(encrypted: set TIDEMARK_STATE_KEY to read it)"
#: Where tidemark creates pgcrypto when the target has not got it, beside no one's state.
PGCRYPTO_SCHEMA = "tidemark_pgcrypto"
#: The text the schema keeps encrypted with its key, which tells a wrong key (schema.sql, tidemark_state_key).
KEY_CHECK = "tidemark state key"


def is_protected(conn: psycopg.Connection[Any], state: StateSchema) -> bool:
    if not state.has(conn, "state_protection"):
        return False
    with conn.cursor(row_factory=tuple_row) as cursor:
        row = cursor.execute(state.sql("select exists (select 1 from {state_protection})")).fetchone()
    return bool(row and row[0])


def check_state_key(conn: psycopg.Connection[Any], state: StateSchema, key: str | None) -> None:
    """Before a pass writes anything: a state key needs pgcrypto in the target, and a protected schema needs
    its own key (a session without it, or with another, would fail at the first key value)."""
    if key is not None:
        row = conn.execute("select exists (select 1 from pg_available_extensions where name = 'pgcrypto')").fetchone()
        if not row or not row[0]:
            raise TidemarkError(
                "TIDEMARK_STATE_KEY is set, but the target's PostgreSQL has no pgcrypto extension, which encrypts "
                "the state with it: install PostgreSQL's contrib modules on the target's server, or unset the key"
            )
    if is_protected(conn, state):
        if key is None:
            raise TidemarkError(f"the state schema {state.name} keeps key values encrypted: set TIDEMARK_STATE_KEY")
        try:
            conn.execute(state.sql("select {state}.tidemark_state_key()"))
        except psycopg.Error as exc:
            raise TidemarkError(first_line(exc)) from None
        finally:
            conn.rollback()
    conn.commit()


def ensure_protection(conn: psycopg.Connection[Any], state: StateSchema, key: str | None) -> None:
    """With a state key, protect the state schema by it (once; after ensure_state_schema)."""
    if key is None or is_protected(conn, state):
        conn.commit()
        return
    try:
        with conn.transaction():
            conn.execute(*ddl_lock_sql(state))
            pgcrypto = _pgcrypto_schema(conn)
            conn.execute(
                state.sql(
                    "insert into {state_protection} (pgcrypto_schema, key_check)"
                    " values (%s, {encrypt}(%s, current_setting('tidemark.state_key'))) on conflict do nothing",
                    encrypt=sql.Identifier(pgcrypto, "pgp_sym_encrypt"),
                ),
                (pgcrypto, KEY_CHECK),
            )
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TidemarkError(
            f"TIDEMARK_STATE_KEY needs pgcrypto in the target database, and the role may not create it "
            f"({first_line(exc)}): have its owner run `create extension pgcrypto`"
        ) from None


def _pgcrypto_schema(conn: psycopg.Connection[Any]) -> str:
    """The schema of pgcrypto's functions, pgcrypto created first (in a schema of its own) if missing."""
    found = "select n.nspname from pg_extension as e join pg_namespace as n on e.extnamespace = n.oid"
    row = conn.execute(found + " where e.extname = 'pgcrypto'").fetchone()
    if row is None:
        schema = sql.Identifier(PGCRYPTO_SCHEMA)
        conn.execute(sql.SQL("create schema if not exists {}").format(schema))
        conn.execute(sql.SQL("create extension if not exists pgcrypto with schema {}").format(schema))
        # Its functions only: every project on the target may encrypt its own state with them.
        conn.execute(sql.SQL("grant usage on schema {} to public").format(schema))
        row = conn.execute(found + " where e.extname = 'pgcrypto'").fetchone()
    assert row is not None
    return str(row[0])
