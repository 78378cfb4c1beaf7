"""What a reconcile compares: each row's key hash and row hash, computed alike in the source and the replica.

A row's text is verify's canonical text of its columns (extract/project/verify.py); its key's
text is that of the key columns. The key hash (60 bits, never negative) places the row in the
key-hash space that reconcile bisects; the row hash (64 bits) stands for its content. Hashing
the key instead of ordering it gives both databases the same ranges, whatever their collations
and however they sort a uuid.

In a table whose cursor is a modify id (rowversion), which every update moves, the row hash is that
of the modify id alone: (key, modify id) tells the rows apart, for less work than the whole row.

The replica keeps both as generated columns (`ensure_hash_columns`), so its side of every
comparison reads two bigints instead of hashing rows; the source is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from extract.planning.table_plan import TablePlan
from extract.project.verify import kind_of
from extract.source.dialects import Dialect
from extract.source.dialects import postgres_canonical as canonical
from extract.source.dialects.postgres import PostgresDialect

_TARGET = PostgresDialect()


@dataclass(frozen=True)
class RowHashes:
    """The two hashes of one table as SQL expressions: over the source table, and over the replica."""

    source_key: str
    source_row: str
    replica_key: str
    replica_row: str
    #: The key's canonical text on each side: a key found on both sides has the same text.
    source_key_text: str
    replica_key_text: str


def row_hashes(dialect: Dialect, plan: TablePlan, qualifier: str = "") -> RowHashes:
    """The hash expressions of `plan`'s table; the replica side's columns prefixed with `qualifier`."""
    key_names = set(plan.key_columns)
    modify_id = plan.cursor.name if plan.cursor is not None and dialect.is_modify_id(plan.cursor) else None
    source_texts, replica_texts, source_keys, replica_keys = [], [], [], []
    for column in plan.columns:
        kind, length = kind_of(column.target_type)
        source_text = dialect.canonical_text(column.source, kind, length)
        replica_text = canonical.stored_canonical_text(
            plan.state, qualifier + _TARGET.quote(column.target_name), kind, length
        )
        # A modify id changes with every update of its row: with the key, it stands for the whole row.
        if modify_id is None or column.source.name == modify_id:
            source_texts.append(source_text)
            replica_texts.append(replica_text)
        if column.target_name in key_names:
            source_keys.append((plan.key_columns.index(column.target_name), source_text))
            replica_keys.append((plan.key_columns.index(column.target_name), replica_text))
    source_key_text = dialect.row_text([text for _, text in sorted(source_keys)])
    replica_key_text = canonical.stored_row_text([text for _, text in sorted(replica_keys)])
    return RowHashes(
        source_key=dialect.hash_bits(source_key_text, 60),
        source_row=dialect.hash_bits(dialect.row_text(source_texts), 64),
        replica_key=canonical.stored_hash_bits(plan.state, replica_key_text, 60),
        replica_row=canonical.stored_hash_bits(plan.state, canonical.stored_row_text(replica_texts), 64),
        source_key_text=source_key_text,
        replica_key_text=replica_key_text,
    )
