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
from extract.source.dialects.postgres import PostgresDialect

_TARGET = PostgresDialect()

# Immutable forms of the canonical text (extract/state/schema.sql), as a generated column needs them.
_IMMUTABLE_FORMS = {
    "int": "cast({} as text)",
    "decimal": "cast(trim_scale({}) as text)",
    "float": "cast({} as text)",
    "timestamp": "_migration.tidemark_stamp_text({})",
    "timestamptz": "_migration.tidemark_stamp_text({})",
    "date": "_migration.tidemark_date_text({})",
    "time": "_migration.tidemark_time_text({})",
    "bool": "case when {0} then 'true' when not {0} then 'false' end",
    "bytes": "encode({}, 'hex')",
    "uuid": "lower(cast({} as text))",
}


def _immutable_row_text(texts: list[str]) -> str:
    """The row text as concat_ws(chr(31), ...) gives it, from immutable parts only (concat_ws is stable)."""
    return " || chr(31) || ".join(f"coalesce({t}, '\\N')" for t in texts)


def _replica_text(quoted: str, target_type: str) -> str:
    kind, length = kind_of(target_type)
    if kind == "char":
        return f"rpad(cast({quoted} as text), {length or 1})"
    return _IMMUTABLE_FORMS.get(kind, "_migration.tidemark_any_text({})").format(quoted)


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
        replica_text = _replica_text(qualifier + _TARGET.quote(column.target_name), column.target_type)
        # A modify id changes with every update of its row: with the key, it stands for the whole row.
        if modify_id is None or column.source.name == modify_id:
            source_texts.append(source_text)
            replica_texts.append(replica_text)
        if column.target_name in key_names:
            source_keys.append((plan.key_columns.index(column.target_name), source_text))
            replica_keys.append((plan.key_columns.index(column.target_name), replica_text))
    source_key_text = dialect.row_text([text for _, text in sorted(source_keys)])
    replica_key_text = _immutable_row_text([text for _, text in sorted(replica_keys)])
    return RowHashes(
        source_key=dialect.hash_bits(source_key_text, 60),
        source_row=dialect.hash_bits(dialect.row_text(source_texts), 64),
        replica_key=f"_migration.tidemark_hash60({replica_key_text})",
        replica_row=f"_migration.tidemark_hash64({_immutable_row_text(replica_texts)})",
        source_key_text=source_key_text,
        replica_key_text=replica_key_text,
    )
