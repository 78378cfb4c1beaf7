"""The queries of the readers of changes a source records itself (SQL Server's Change Tracking and CDC):
none by default, a dialect whose source has them says them."""

from __future__ import annotations


class RecordedChangesSql:
    name: str

    def change_tracking_installed_query(self) -> str | None:
        """SQL returning '1' when the source can track changes at all, '0' when not; None when it always can."""
        return None

    def change_tracking_query(self) -> str:
        """SQL returning (schema, table, minimum valid version as text) of every table Change Tracking
        records the changes of (sys.change_tracking_tables): one query for every table of a pass."""
        raise NotImplementedError(f"{self.name} has no Change Tracking")

    def change_tracking_version_query(self) -> str:
        """One row, one column: CHANGE_TRACKING_CURRENT_VERSION() as text; no transaction in flight can
        commit a change at or below it."""
        raise NotImplementedError(f"{self.name} has no Change Tracking")

    def changes_relation(self, schema: str, table: str, since: int) -> str:
        """CHANGETABLE(CHANGES schema.table, since) AS ct: each key changed after version `since` once, its
        key columns under their own names. `since` is a number the source gave, never user text."""
        raise NotImplementedError(f"{self.name} has no Change Tracking")

    def cdc_installed_query(self) -> str:
        """SQL returning '1' when the database captures changes (CDC), '0' when not."""
        raise NotImplementedError(f"{self.name} has no CDC")

    def cdc_instances_query(self) -> str:
        """SQL returning (schema, table, capture instance, start LSN, minimum LSN) of every capture instance,
        the LSNs as 20 hex digits: one query for every table of a pass."""
        raise NotImplementedError(f"{self.name} has no CDC")

    def cdc_captured_columns_query(self) -> str:
        """SQL returning (capture instance, column name) of every column every capture instance captures."""
        raise NotImplementedError(f"{self.name} has no CDC")

    def cdc_max_lsn_query(self) -> str:
        """One row, one column: sys.fn_cdc_get_max_lsn() as 20 hex digits, every change below it captured."""
        raise NotImplementedError(f"{self.name} has no CDC")

    def cdc_changes(self, instance: str, after: int, upto: int) -> str:
        """cdc.fn_cdc_get_all_changes_<instance> for the LSNs after `after` up to `upto`, before-images of
        updates included (numbers the source gave, never user text)."""
        raise NotImplementedError(f"{self.name} has no CDC")
