"""Which reader finds a table's changes: Change Tracking for a tracked table, else a rowversion, else a
clock column; the seed's reader overrides the choice, and one the table cannot have is refused, named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from extract.config.seeds import SyncTable
from extract.core.errors import TidemarkError
from extract.planning.reader_choice import choose_reader
from extract.source.catalog import SourceColumn, SourceTable
from extract.source.dialects import TsqlDialect
from extract.source.recorded_tables import CaptureInstance, RecordedTables

DIALECT = TsqlDialect()
CANDIDATES = ("ModifiedDate",)
COLUMNS = (
    SourceColumn("Id", "int", None, None, None, False, 1),
    SourceColumn("ModifiedDate", "datetime", None, None, None, False, 2),
    SourceColumn("RowVer", "rowversion", None, None, None, False, 3),
)
TABLE = SourceTable("Sales", "Orders", COLUMNS, ("Id",))
CLOCK_ONLY = replace(TABLE, columns=COLUMNS[:2])
TRACKED = {("sales", "ORDERS"): 42}  # as the catalog spells it, in another case
CAPTURED = {("Sales", "Orders"): (CaptureInstance("Sales_Orders", 7, 9),)}


def choose(
    reader: str,
    table: SourceTable = TABLE,
    tracked: dict[tuple[str, str], int] = TRACKED,
    captured: dict[tuple[str, str], tuple[CaptureInstance, ...]] | None = None,
) -> tuple[str, str, int]:
    """(the cursor, the reader of recorded changes, its minimum valid position); '-' and 0 for none."""
    recorded = RecordedTables(tracked, captured or {})
    choice = choose_reader(SyncTable("Sales", "Orders", reader=reader), table, recorded, CANDIDATES, DIALECT)
    changes = choice.changes
    cursor = choice.cursor.name if choice.cursor else "-"
    return (cursor, "-", 0) if changes is None else (cursor, changes.reader, changes.min_valid)


def test_a_tracked_table_is_read_by_change_tracking_else_by_its_rowversion_else_its_clock() -> None:
    assert choose("auto") == ("-", "change_tracking", 42)
    assert choose("auto", tracked={}) == ("RowVer", "-", 0)
    assert choose("auto", tracked={}, captured=CAPTURED) == ("-", "cdc", 9)  # CDC, its lowest minimum LSN
    assert choose("auto", captured=CAPTURED) == ("-", "change_tracking", 42)  # Change Tracking first
    assert choose("auto", CLOCK_ONLY, {}) == ("ModifiedDate", "-", 0)
    # A key the seed sets is not the one Change Tracking records: the cursor reads it.
    assert choose("auto", replace(TABLE, key_enforced=False)) == ("RowVer", "-", 0)


def test_the_seed_overrides_the_choice() -> None:
    assert choose("clock") == ("ModifiedDate", "-", 0)
    assert choose("rowversion") == ("RowVer", "-", 0)
    assert choose("full") == ("-", "-", 0)
    assert choose("change_tracking") == ("-", "change_tracking", 42)
    assert choose("cdc", captured=CAPTURED) == ("-", "cdc", 9)


@pytest.mark.parametrize(
    ("reader", "table", "tracked", "said"),
    [
        ("change_tracking", TABLE, {}, "Sales.Orders: reader change_tracking, but Change Tracking is not enabled"),
        (
            "change_tracking",
            replace(TABLE, key_enforced=False),
            TRACKED,
            "Sales.Orders: reader change_tracking records the table's own primary key",
        ),
        ("rowversion", CLOCK_ONLY, {}, "Sales.Orders: reader rowversion reads by a rowversion column, and the table's"),
        ("clock", replace(TABLE, columns=(COLUMNS[0], COLUMNS[2])), {}, "reader clock reads by a date-time column"),
        ("cdc", TABLE, TRACKED, "Sales.Orders: reader cdc, but CDC is not enabled on the table in the source"),
    ],
)
def test_a_reader_the_table_cannot_have_is_refused(
    reader: str, table: SourceTable, tracked: dict[tuple[str, str], int], said: str
) -> None:
    with pytest.raises(TidemarkError, match=said.replace("(", r"\(").replace(")", r"\)")):
        choose(reader, table, tracked)
