"""The stand-in's modify dates (extract/devtools/ddl_times.py): installed again in the same database, and
stamped by a statement that reports a relation twice."""

from __future__ import annotations

import psycopg
from psycopg import sql

from extract.devtools.ddl_times import install_ddl_times
from tests.conftest import database_url

DATABASE = "ddl_times_test"


def test_installing_twice_and_replacing_a_view_stamp_each_relation_once(pg_admin_url: str) -> None:
    database = sql.Identifier(DATABASE)
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("drop database if exists {} with (force)").format(database))
        admin.execute(sql.SQL("create database {}").format(database))
    try:
        with psycopg.connect(database_url(pg_admin_url, DATABASE), autocommit=True) as conn:
            install_ddl_times(conn)
            install_ddl_times(conn)  # replaces its own listing view: the view is reported twice
            conn.execute("create view public.listed as select 1 as one")
            conn.execute("create or replace view public.listed as select 1 as one")
            stamped = conn.execute(
                "select count(*) from tidemark_catalog.ddl_times where object_id = 'public.listed'::regclass"
            ).fetchone()
            listed = conn.execute(
                "select count(*) from tidemark_catalog.objects where object_name = 'listed'"
            ).fetchone()
        assert stamped == (1,) and listed == (1,)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(database))
