"""What a CDC read asks the source: the highest LSN captured, and from a capture instance's change rows in
an LSN range the last image of each key: its row when that is an insert or an update, its key when a
delete (or the before-image of an update that moved the key elsewhere).

An LSN is kept in the state as 'lsn:' and its 20 hex digits, so that LSNs sort as text as they do as
numbers and no other reader's state can pass for one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extract.core.errors import TidemarkError
from extract.source.catalog import SourceColumn
from extract.source.dialects import Dialect
from extract.source.jdbc import JdbcConnection
from extract.source.watermarks import CDC_PREFIX

_LSN = re.compile(r"^lsn:([0-9A-F]{20})$")
#: __$operation: 1 delete, 2 insert, 3 the row before an update, 4 after it.
_UPSERTS = "2, 4"
_GONE = "1, 3"


def lsn_text(lsn: int) -> str:
    return f"{CDC_PREFIX}{lsn:020X}"


def parse_lsn(text: str) -> int:
    found = _LSN.match(text.strip())
    if found is None:
        raise TidemarkError(f"not a CDC log sequence number ('lsn:' and 20 upper-case hex digits): {text!r}")
    return int(found.group(1), 16)


def max_lsn(source: JdbcConnection, dialect: Dialect) -> int:
    """sys.fn_cdc_get_max_lsn(): every change up to it is captured."""
    rows = source.query(dialect.cdc_max_lsn_query())
    text = (rows[0][0] or "") if rows else ""
    try:
        return int(text.strip(), 16)
    except ValueError:
        raise TidemarkError(
            f"the source returned no CDC log sequence number ({text!r}): is CDC enabled on its database "
            "(sys.sp_cdc_enable_db) and its capture job running?"
        ) from None


def _last_images(dialect: Dialect, instance: str, keys: Sequence[SourceColumn], after: int, upto: int) -> str:
    """Each key's last change in (after, upto]: the latest LSN, then sequence, then operation (an update's
    after-image over its before-image)."""
    key_list = ", ".join(f"c.{dialect.quote(k.name)}" for k in keys)
    order = ", ".join(f"c.{dialect.quote(name)} desc" for name in ("__$start_lsn", "__$seqval", "__$operation"))
    return (
        f"select c.*, row_number() over (partition by {key_list} order by {order}) as tidemark_last"
        f" from {dialect.cdc_changes(instance, after, upto)} as c"
    )


def changed_rows_relation(dialect: Dialect, instance: str, keys: Sequence[SourceColumn], after: int, upto: int) -> str:
    """The last image of every key inserted or updated in (after, upto], which a run's reads select from as
    they would from the table."""
    operation = dialect.quote("__$operation")
    return (
        f"(select * from ({_last_images(dialect, instance, keys, after, upto)}) as ranked"
        f" where ranked.tidemark_last = 1 and ranked.{operation} in ({_UPSERTS})) as tidemark_changed"
    )


def deleted_keys_query(dialect: Dialect, instance: str, keys: Sequence[SourceColumn], after: int, upto: int) -> str:
    """The keys whose last change in (after, upto] took them away, as text their replica columns cast back
    exactly: the run's tombstones."""
    operation = dialect.quote("__$operation")
    texts = ", ".join(dialect.key_text(k, "ranked.") for k in keys)
    return (
        f"select {texts} from ({_last_images(dialect, instance, keys, after, upto)}) as ranked"
        f" where ranked.tidemark_last = 1 and ranked.{operation} in ({_GONE})"
    )


def changed_keys(dialect: Dialect, instance: str, keys: Sequence[SourceColumn], after: int, upto: int) -> str:
    """The keys with a change in (after, upto], each once, as a relation aliased `ct`."""
    key_list = ", ".join(f"c.{dialect.quote(k.name)}" for k in keys)
    return f"(select distinct {key_list} from {dialect.cdc_changes(instance, after, upto)} as c) as ct"
