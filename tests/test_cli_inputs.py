"""`python -m memfs_prompt compile` takes what a caller can hand upstream: any JSON number, any date string
`new Date` reads (issue 17, family 3); an Invalid Date throws as upstream does, an unmodelled string is a
clear error, never a crash."""

from __future__ import annotations

import json

import pytest

from memfs_prompt.cli import main


def run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    try:
        code = main(["compile", *argv])
    except SystemExit as exit:
        code = int(exit.code or 0)
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


@pytest.mark.parametrize(
    ("count", "printed"),
    [
        ("9007199254740993", "9007199254740992"),
        ("1e21", "1e+21"),
        ("3.0", "3"),
        ("-5", "-5"),
        ("-0", "0"),
        ("0.5", "0.5"),
        ("NaN", "NaN"),
        ("1e400", "Infinity"),
    ],
)
def test_any_json_number_is_a_message_count(make_repo, capsys, count: str, printed: str) -> None:
    repo = make_repo({"system/a.md": "a\n"})
    code, record, _ = run(
        capsys, str(repo.path), "--json", "--now", "2026-01-01T00:00:00Z", f"--previous-message-count={count}"
    )
    assert code == 0 and record is not None
    assert f"- {printed} previous messages between" in record["content"]


def test_a_count_that_is_not_a_number_is_refused(make_repo, capsys) -> None:
    repo = make_repo({"system/a.md": "a\n"})
    code, record, err = run(capsys, str(repo.path), "--json", "--previous-message-count", "three")
    assert code == 2 and record is None and "not a number" in err


def test_a_rolled_over_clock_compiles(make_repo, capsys) -> None:
    repo = make_repo({"system/a.md": "a\n"})
    code, record, _ = run(capsys, str(repo.path), "--json", "--now", "2026-02-30T24:00:00Z")
    assert code == 0 and record is not None and record["compiledAt"] == "2026-03-03T00:00:00.000Z"


def test_an_invalid_date_throws_as_upstream(make_repo, capsys) -> None:
    repo = make_repo({"system/a.md": "a\n"})
    code, record, err = run(capsys, str(repo.path), "--json", "--now", "2026-01-32T00:00:00Z")
    assert code == 1 and record is None and "RangeError: Invalid Date" in err


def test_a_date_string_outside_the_model_is_a_clear_error(make_repo, capsys) -> None:
    repo = make_repo({"system/a.md": "a\n"})
    code, record, err = run(capsys, str(repo.path), "--json", "--now", "Jan 2 2026")
    assert code == 2 and record is None and "not a date-time string the port models" in err
