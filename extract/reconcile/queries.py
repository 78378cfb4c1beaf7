"""The two queries a reconcile asks of either side, in that side's dialect: a level's figures per range,
and the (key, row hash) pairs of the ranges to compare."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from extract.reconcile.tree import HashSpace, Level, Node
from extract.source.dialects import Dialect

BIGINT_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class HashedRelation:
    """A relation of one side and its hash expressions, in one dialect."""

    dialect: Dialect
    relation: str  # a table reference or a parenthesised query with an alias
    key_hash: str
    row_hash: str
    key_text: str
    null_key: str  # 1 when some key column is NULL, else 0
    #: What the pairs query returns besides key text and row hash, for the repair (as text).
    extra: Sequence[str] = ()
    #: SQL on the relation's columns: true for the rows compared ("": all of them).
    where: str = ""
    #: The key column whose offset from `origin` is the key place ("": places are key hashes).
    ordered_key: str = ""
    origin: int = 0


def _where(conditions: Sequence[str]) -> str:
    kept = [c for c in conditions if c]
    return " where " + " and ".join(f"({c})" for c in kept) if kept else ""


def node_expression(side: HashedRelation, space: HashSpace, depth: int) -> str:
    """The index of a row's range at `depth`."""
    return f"{side.key_hash} / {space.divisor(depth)}"


def level_query(side: HashedRelation, space: HashSpace, level: Level, within: str = "", version: str = "") -> str:
    """Rows: range index, row count, sum of row hashes (exact), rows with a NULL key; only ranges with rows.
    With `version` (an expression per row), then the exact sum of its values.

    `within` narrows the rows further (a key range of the source, one query of several at once)."""
    dialect = side.dialect
    node = node_expression(side, space, level.depth)
    conditions = [side.where, within]
    if level.parents is not None:
        parent = f"{side.key_hash} / {space.divisor(level.depth - 1)}"
        conditions.append(places_slice(side, space, [Node(level.depth - 1, p) for p in level.parents]))
        if not level.whole:  # a whole level's parents are consecutive: their slice is all there is to ask
            conditions.append(dialect.in_integers(parent, level.parents))
            conditions.append(f"({node}) % {space.factor} <> {space.factor - 1}")  # the cache derives the last
    versions = ("", "")
    if version:
        versions = (f", {version} as tidemark_version", f", {dialect.exact_sum('hashed.tidemark_version')}")
    hashed = (
        f"select {node} as tidemark_node, {side.row_hash} as tidemark_row_hash, "
        f"{side.null_key} as tidemark_null_key{versions[0]} from {side.relation}{_where(conditions)}"
    )
    return (
        f"select hashed.tidemark_node, {dialect.count_expression()} as tidemark_rows, "
        f"{dialect.exact_sum('hashed.tidemark_row_hash')} as tidemark_checksum, "
        f"sum(hashed.tidemark_null_key) as tidemark_null_keys{versions[1]} "
        f"from ({hashed}) as hashed group by hashed.tidemark_node"
    )


def versions_query(side: HashedRelation, space: HashSpace, depth: int, version: str) -> str:
    """Rows: range index, row count and the exact sum of `version` over its rows; no row is hashed."""
    node = node_expression(side, space, depth)
    return (
        f"select {node}, {side.dialect.count_expression()}, {side.dialect.exact_sum(version)} "
        f"from {side.relation}{_where([side.where])} group by {node}"
    )


def leaves_filter(side: HashedRelation, space: HashSpace, leaves: Sequence[Node]) -> str:
    """The rows of the ranges `leaves`, whatever their depths."""
    by_depth: dict[int, list[int]] = {}
    for node in leaves:
        by_depth.setdefault(node.depth, []).append(node.index)
    return " or ".join(
        side.dialect.in_integers(f"{side.key_hash} / {space.divisor(depth)}", sorted(indexes))
        for depth, indexes in sorted(by_depth.items())
    )


def places_slice(side: HashedRelation, space: HashSpace, leaves: Sequence[Node]) -> str:
    """With places by offset, the keys from the first range of `leaves` to the end of the last: a slice
    of the key's index, so that a turn of the pairs reads only its own rows ("" for hashed keys)."""
    if not side.ordered_key or not leaves:
        return ""
    first = min(n.index * space.divisor(n.depth) for n in leaves)
    end = max((n.index + 1) * space.divisor(n.depth) for n in leaves)
    low, high = side.origin + first, min(side.origin + end - 1, BIGINT_MAX)
    return f"{side.ordered_key} between cast({low} as bigint) and cast({high} as bigint)"


def pairs_query(side: HashedRelation, space: HashSpace, leaves: Sequence[Node], within: str = "") -> str:
    """Rows: key text, key place, row hash, then `side.extra`, for every row of the ranges `leaves`."""
    named = [(side.key_text, "tidemark_key"), (side.key_hash, "tidemark_key_hash"), (side.row_hash, "tidemark_hash")]
    named += [(expression, f"tidemark_extra_{i}") for i, expression in enumerate(side.extra, start=1)]
    columns = ", ".join(f"{expression} as {name}" for expression, name in named)
    conditions = [side.where, within, places_slice(side, space, leaves), leaves_filter(side, space, leaves)]
    return f"select {columns} from {side.relation}{_where(conditions)}"
