"""Which of `--dbt`'s arguments the parse a pass reads ahead of its run is given."""

from __future__ import annotations

from extract.runtime.dbt_parse_options import parse_options


def test_the_options_that_change_the_parse_are_kept_with_their_values() -> None:
    args = ["build", "--select", "a+", "--vars", "{x: 1}", "-t", "prod", "--full-refresh", "--profiles-dir", "/p"]
    assert parse_options(args) == ["--vars", "{x: 1}", "-t", "prod", "--profiles-dir", "/p"]


def test_attached_values_are_kept_as_written() -> None:
    assert parse_options(["run", "--target=prod", "-tdev", "--vars={y: 2}", "--threads=4"]) == [
        "--target=prod",
        "-tdev",
        "--vars={y: 2}",
    ]


def test_a_value_is_never_read_as_an_option() -> None:
    assert parse_options(["build", "--target", "-tx"]) == ["--target", "-tx"]


def test_arguments_that_do_not_change_the_parse_give_nothing() -> None:
    assert parse_options(["build", "--select", "state", "--full-refresh", "--threads", "8"]) == []
