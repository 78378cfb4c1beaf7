"""What a reconcile compares: each row's key place and row hash, computed alike in the source and the replica.

A row's hash (64 bits of an md5) stands for its content: the hash of its columns' texts. A column
whose value prints alike in both databases (the source's dialect says which, `plain_text_alike`)
is hashed as its plain text; any other as verify's canonical text (extract/project/verify.py),
which costs a conversion per row. A key's text is always the canonical one: it matches keys
between the two sides.

A row's key place puts it in the space reconcile bisects. For a key of one whole-number column it
is the key's offset from the source's lowest key: integer arithmetic, ranges of neighbouring keys.
For any other key it is the key hash (60 bits of the md5 of the key's text): hashing instead of
ordering gives both databases the same ranges, whatever their collations and however they sort a
uuid.

In a table whose cursor is a modify id (rowversion), which every update moves, the row hash is that
of the modify id alone: (key, modify id) tells the rows apart, for less work than the whole row.

Both sides compute their hashes as they scan: the replica keeps none, so no table is rewritten
to compare it.
"""

from __future__ import annotations

from dataclasses import dataclass

from extract.planning.table_plan import TablePlan
from extract.project.verify import kind_of
from extract.reconcile.boundary import KeyBounds
from extract.reconcile.tree import HASH_BITS
from extract.source.dialects import Dialect
from extract.source.dialects import postgres_canonical as canonical
from extract.source.dialects.postgres import PostgresDialect

_TARGET = PostgresDialect()
#: Offsets of a wider key range than this are hashed instead: key - low must fit a bigint with room.
_WIDEST_OFFSETS = 62


@dataclass(frozen=True)
class RowHashes:
    """The hashes of one table as SQL expressions: over the source table, and over the replica."""

    source_key: str
    source_row: str
    replica_key: str
    replica_row: str
    #: The key's canonical text on each side: a key found on both sides has the same text.
    source_key_text: str
    replica_key_text: str
    #: Key places lie in [0, 2^key_bits).
    key_bits: int = HASH_BITS
    #: SQL on the source's columns: true for the rows inside the key range compared ("": all of them).
    source_within: str = ""
    #: With places by offset: each side's key column, and the key at place 0 (a range of places is then
    #: a range of keys, which an index reads).
    source_ordered_key: str = ""
    replica_ordered_key: str = ""
    origin: int = 0


def _offset_bounds(plan: TablePlan, bounds: KeyBounds | None) -> tuple[int, int, int] | None:
    """(lowest key, highest key, bits of the widest offset) for a key of one whole-number column."""
    if len(plan.source_keys) != 1 or bounds is None or not bounds.whole_numbers or bounds.low is None:
        return None
    low, high = int(bounds.low), int(bounds.high or bounds.low)
    bits = (high - low).bit_length()
    return None if bits > _WIDEST_OFFSETS else (low, high, bits)


def row_hashes(dialect: Dialect, plan: TablePlan, bounds: KeyBounds | None = None, qualifier: str = "") -> RowHashes:
    """The hash expressions of `plan`'s table; the replica side's columns prefixed with `qualifier`.
    With `bounds` (the source's key range, from `key_bounds`), a whole-number key is placed by offset."""
    key_names = set(plan.key_columns)
    modify_id = plan.cursor.name if plan.cursor is not None and dialect.is_modify_id(plan.cursor) else None
    source_texts, replica_texts, source_keys, replica_keys = [], [], [], []
    for column in plan.columns:
        kind, length = kind_of(column.target_type)
        replica_column = qualifier + _TARGET.quote(column.target_name)
        source_text = dialect.canonical_text(column.source, kind, length)
        replica_text = canonical.canonical_text(replica_column, kind, length)
        if column.target_name in key_names:
            source_keys.append((plan.key_columns.index(column.target_name), source_text))
            replica_keys.append((plan.key_columns.index(column.target_name), replica_text))
        if dialect.plain_text_alike(column.source, column.target_type, kind):
            source_text, replica_text = dialect.plain_text(column.source), canonical.plain_text(replica_column)
        # A modify id changes with every update of its row: with the key, it stands for the whole row.
        if modify_id is None or column.source.name == modify_id:
            source_texts.append(source_text)
            replica_texts.append(replica_text)
    source_key_text = dialect.row_text([text for _, text in sorted(source_keys)])
    replica_key_text = canonical.row_text([text for _, text in sorted(replica_keys)])
    hashes = RowHashes(
        source_key=dialect.hash_bits(source_key_text, HASH_BITS),
        source_row=dialect.hash_bits(dialect.row_text(source_texts), 64),
        replica_key=canonical.hash_bits(replica_key_text, HASH_BITS),
        replica_row=canonical.hash_bits(canonical.row_text(replica_texts), 64),
        source_key_text=source_key_text,
        replica_key_text=replica_key_text,
    )
    offsets = _offset_bounds(plan, bounds)
    return hashes if offsets is None else _placed_by_offset(dialect, plan, hashes, qualifier, offsets)


def _placed_by_offset(
    dialect: Dialect, plan: TablePlan, hashes: RowHashes, qualifier: str, offsets: tuple[int, int, int]
) -> RowHashes:
    """`hashes` with each row placed at its key's offset from `low`, the source's side limited to [low,
    high]: a row it gains outside that range while it is compared waits for the next sync or reconcile
    (the replica's rows outside it are the boundary cleanup's)."""
    low, high, bits = offsets
    source = dialect.quote(plan.source_keys[0].name)
    replica = qualifier + _TARGET.quote(plan.key_columns[0])

    def within(column: str) -> str:
        return f"{column} between cast({low} as bigint) and cast({high} as bigint)"

    def offset(column: str) -> str:
        return f"(cast({column} as bigint) - cast({low} as bigint))"

    return RowHashes(
        source_key=offset(source),
        source_row=hashes.source_row,
        replica_key=offset(replica),
        replica_row=hashes.replica_row,
        source_key_text=hashes.source_key_text,
        replica_key_text=hashes.replica_key_text,
        key_bits=bits,
        source_within=within(source),
        source_ordered_key=source,
        replica_ordered_key=replica,
        origin=low,
    )
