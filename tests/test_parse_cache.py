"""generate keeps dbt's partial-parse cache unless that cache parsed another version of the snapshots
file it writes (dbt can then keep a snapshot twice), or none."""

from __future__ import annotations

import shutil

from tests.conftest import Project
from tests.demo_fixture import demo

__all__ = ["demo"]


def test_generate_drops_dbt_s_parse_only_when_it_parsed_other_snapshots(demo: Project) -> None:
    demo.reuse_parses = False  # what generate itself does to the cache
    cache = demo.root / "target" / "partial_parse.msgpack"
    snapshots = demo.root / "snapshots" / "_replica__snapshots.yml"
    demo.dbt("parse")
    parsed = cache.read_bytes()

    demo.generate()  # the snapshots dbt parsed
    assert cache.read_bytes() == parsed
    snapshots.unlink()
    demo.generate()  # gone from the folder, written again as dbt parsed them
    assert cache.read_bytes() == parsed

    snapshots.write_text(snapshots.read_text() + "# edited by hand\n")
    demo.dbt("parse")
    demo.generate()  # dbt parsed the edited file: its cache goes
    assert not cache.exists()

    demo.dbt("parse")
    cache.write_bytes(b"not what dbt writes")
    demo.generate()
    assert not cache.exists()

    # A cache of the project before its tables were generated: the state model's references to the
    # replicas are read again only by a parse afresh.
    for generated in ("models", "snapshots", "macros_generated"):
        shutil.rmtree(demo.root / generated)
    demo.dbt("parse")
    demo.generate()
    assert not cache.exists()
    demo.sync_replicas()
    assert demo.scalar("select count(*) from _migration._migration_state") > 0

    # What dbt parses after each: the replicas merge and their histories are taken.
    demo.dbt("parse")
    snapshots.unlink()
    demo.generate()
    demo.extract()
    demo.build()
    assert demo.scalar(f'select count(*) from "demo__{demo.source_db}__dbo".customers__history') > 0
