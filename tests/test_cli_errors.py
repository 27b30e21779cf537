"""Every wrong input is refused before anything runs: one clear error, exit 2 (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.common import select
from harness.cli.keyword import Keyword
from harness.cli.main import main
from harness.model import Scenario

WRONG = [
    (["run", "--reference", "9.9.9"], "conformance pin pypi:9.9.9"),
    (["run", "--reference", "pypi:0.1"], "conformance pin pypi:0.1"),
    (["run", "--reference", "npm:0.0.1"], "conformance pin npm:0.0.1"),
    (["run", "--reference", "nonsense:1"], "--reference 'nonsense:1'"),
    (["run", "--reference", "bundle:/no/such/letta.js"], "no such bundle file"),
    (["run", "--reference", "checkout:/no/such"], "not a letta-code checkout"),
    (["run", "--profile", "no-such-profile"], "unknown profile"),
    (["run", "/no/such/cases"], "/no/such/cases: no such file"),
    (["run", "-k", "not ("], "-k 'not ('"),
    (["run", "-k", "a and"], "-k 'a and'"),
    (["run", "--maxfail", "0"], "at least 1"),
    (["run", "--durations", "-1"], "at least 0"),
    (["run", "--lf"], "give --report DIR"),
    (["list", "/no/such"], "no such file"),
    (["diff-repo", "/no/such/dir"], "memory directory /no/such/dir: no such file"),
    (["diff-repo", "/no/such/dir", "--reference", "9.9.9"], "conformance pin"),
    (["diff-repo", ".", "--now", "yesterday"], "is not an ISO 8601 date-time string"),
    (["diff-repo", ".", "--previous-message-count", "NaN"], "is not a finite number, so no request can carry it"),
    (["diff-repo", ".", "--previous-message-count", "three"], "is not a number (a JSON number such as 3"),
    (["add-case", "/no/such", "--id", "ada"], "no such file"),
    (["add-case", ".", "--id", "Ada_Memory"], "e.g. ada_memory"),
    (["add-case", ".", "--id", "ada", "--tags", "no-such-tag"], "unknown tag"),
    (["reduce", "/no/such.yaml"], "no such file"),
    (["reduce", "/no/such.yaml", "--reference", "0.0.0"], "conformance pin"),
    (["fuzz", "--cases", "/no/such"], "no such file"),
    (["fuzz", "--reference", "pypi:0.0.0"], "conformance pin pypi:0.0.0"),
    (["fuzz", "--seconds", "0"], "--seconds 0"),
    (["matrix", "--reference", "pypi:9.9"], "conformance pin pypi:9.9"),
    (["matrix", "/no/such"], "no such file"),
    (["compare-reports", "/no/old", "/no/new"], "report /no/old: no such file"),
    (["show", "/no/such/dir"], "no such file"),
    (["show", ".", "--reference", "0.0.1"], "conformance pin"),
    (["merge-reports", "/no/such", "--out", "out"], "cannot read"),
]


@pytest.mark.parametrize(("argv", "says"), WRONG, ids=[" ".join(a) for a, _ in WRONG])
def test_a_wrong_input_is_one_error_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own refusals
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert code == 2
    assert says in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1, err
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_unpinned_reference_names_every_pinned_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--reference", "pypi:9.9.9"]) == 2
    err = capsys.readouterr().err
    assert "npm:0.32.8, pypi:0.32.13" in err and "pypi:0.34.12" in err  # in release order, both registries


def _case(case_id: str, *tags: str) -> Scenario:
    return Scenario(case_id, "", Path(f"{case_id}.yaml"), tags, {}, {})


@pytest.mark.parametrize(
    ("expression", "kept"),
    [
        ("bom", ["bom-crlf", "bom-only"]),
        ("not bom", ["crlf-plain", "zeta"]),
        ("bom and not crlf", ["bom-only"]),
        ("crlf or zeta", ["bom-crlf", "crlf-plain", "zeta"]),
        ("crlf, zeta", ["bom-crlf", "crlf-plain", "zeta"]),
        ("(bom or zeta) and not only", ["bom-crlf", "zeta"]),
        ("quirk", ["zeta"]),  # a tag
    ],
)
def test_k_takes_pytest_style_expressions(expression: str, kept: list[str]) -> None:
    cases = [_case("bom-crlf"), _case("bom-only"), _case("crlf-plain"), _case("zeta", "quirk")]
    assert [s.id for s in select(cases, Keyword(expression))] == kept


def test_list_into_a_closed_pipe_ends_quietly() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        f"{sys.executable} -m harness.cli list | head -1", shell=True, capture_output=True, text=True, check=False
    )
    assert done.stdout.count("\n") == 1 and "BrokenPipe" not in done.stderr and "Traceback" not in done.stderr
