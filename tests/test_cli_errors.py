"""Every wrong input is refused before anything runs: one clear error, exit 2 (issue 19); anything else
raised is a harness bug: its traceback and exit 3, never passed off as usage (issue 24)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.cases.select import Keyword
from harness.cli import list_cases
from harness.cli.common import UsageError, select
from harness.cli.main import main
from harness.core.model import Scenario

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
    (["add-case", ".", "--id", "ada"], "no cases/ in"),  # an empty directory: commands write only into ./cases
    (["fuzz"], "no cases/ in"),
    (["fuzz", "--cases", "."], ": give --out DIR"),
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
    (["run", "--shard", "4/3"], "--shard '4/3': K must be between 1 and N"),
    (
        ["run", "--reference", "letta-server:0.16.8"],
        "is an implementation under test, compared with letta-code references: --impl letta-server:0.16.8",
    ),
    (["run", "--impl", "pyhton"], "--impl 'pyhton': use python, python-cli"),
    (["run", "--impl", "cmd:no-such-program-here --serve"], "no program 'no-such-program-here' on PATH"),
    (["run", "--reference", "git:@HEAD"], "use git:PATH or git:PATH@REV"),
    (["run", "--reference", "git:/no/such"], "--reference git:/no/such: git rev-parse"),
    (["drift", "/no/such/report.json"], "/no/such/report.json: cannot read it"),
    (["mutation", "--mutants", "/no/such.yaml"], "--mutants /no/such.yaml: no such file"),
    (["history", "--git", "/no/such", "--from", "HEAD"], "--git /no/such: git rev-parse"),
    (["upstream-head", "--git", "/no/such", "--release", "nonsense:1"], "--reference 'nonsense:1'"),
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


def _git_clone(path: Path, package: str) -> Path:
    path.mkdir()
    (path / "package.json").write_text(package)
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", "-C", str(path), *command], check=True)
    return path


def _bundle(path: Path, package: str) -> Path:
    path.mkdir()
    (path / "package.json").write_text(package)
    (path / "letta.js").write_text("")
    return path / "letta.js"


MADE = [
    # (what to make under tmp_path, the arguments given it, what the error says)
    (lambda d: _git_clone(d / "clone", "{}"), ["run", "--reference", "git:{}"], "has no version in package.json"),
    (
        lambda d: _git_clone(d / "clone", '{"version": "0.1.0"}'),
        ["diff-repo", ".", "--reference", "git:{}"],
        "is letta-code 0.1.0, a version no profile maps",
    ),
    (
        lambda d: _bundle(d / "bundle", '{"version": "0.1.0"}'),
        ["run", "--reference", "bundle:{}"],
        "letta-code 0.1.0 maps to no profile",
    ),
    (lambda d: _git_clone(d / "clone", "{}"), ["run", "--reference", "git:{}#no-such-profile"], "unknown profile"),
    (
        lambda d: _write(d / "mutants.yaml", "mutants:\n  - id: a\n"),
        ["mutation", "--mutants", "{}"],
        "mutants.yaml:2: mutants/0: 'file' is a required property (add it)",
    ),
    (lambda d: _write(d / "report.json", "not json"), ["drift", "{}"], "not JSON"),
    (lambda d: _write(d / "a-file", ""), ["add-case", ".", "--id", "a", "--out", "{}"], "not a directory"),
    (lambda d: _write(d / "a-file", ""), ["fuzz", "--out", "{}"], "not a directory"),
    (
        lambda d: _write(d / "report.json", '{"results": [{"case": "a"}]}').parent,
        ["run", "--lf", "--report", "{}"],
        "is not a report",
    ),
]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(("make", "argv", "says"), MADE, ids=[" ".join(a) for _, a, _ in MADE])
def test_an_input_the_harness_cannot_use_is_a_usage_error_not_a_crash(
    make, argv: list[str], says: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each of these reached main as a ValueError, KeyError or OSError, which main used to call usage;
    now only a UsageError is, so each is raised as one where the input is read."""
    made = make(tmp_path)
    code = main([a.replace("{}", str(made)) for a in argv])
    err = capsys.readouterr().err
    assert (code, "Traceback" in err) == (2, False), err
    assert says in err and len([line for line in err.splitlines() if "error" in line]) == 1, err


@pytest.mark.parametrize("bug", [KeyError("no_such_key"), ValueError("bad value"), OSError("no such thing")])
def test_a_harness_bug_is_a_crash_with_its_traceback_and_exit_3_not_a_usage_error(
    bug: Exception, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise bug

    monkeypatch.setattr(list_cases, "load_selected", broken)
    assert main(["list"]) == 3
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and f"{type(bug).__name__}: {bug}" in err
    assert "the harness crashed" in err


def test_a_usage_error_is_exit_2_with_its_message_and_no_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise UsageError("--thing 3: give a thing")

    monkeypatch.setattr(list_cases, "load_selected", refused)
    assert main(["list"]) == 2
    assert capsys.readouterr().err == "error: --thing 3: give a thing\n"


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
        ("QUIRK or BOM-O", ["bom-only", "zeta"]),  # in any case, as pytest's -k
        ("uir", ["zeta"]),  # part of a tag, as pytest matches part of a marker's name
    ],
)
def test_k_takes_pytest_style_expressions(expression: str, kept: list[str]) -> None:
    cases = [_case("bom-crlf"), _case("bom-only"), _case("crlf-plain"), _case("zeta", "quirk")]
    assert [s.id for s in select(cases, Keyword(expression))] == kept


def test_reduce_writes_into_the_current_directory_s_cases_not_beside_the_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one rule (cli.common.cases_dir): without ./cases, reduce asks for --out before it reduces anything."""
    case = tmp_path / "elsewhere" / "mine.yaml"
    case.parent.mkdir()
    case.write_text("id: mine\ndescription: d\nrepo:\n  commits:\n    - files:\n        system/a.md: a\n")
    monkeypatch.chdir(tmp_path)
    assert main(["reduce", str(case)]) == 2
    assert f"no cases/ in {tmp_path}: give --out DIR" in capsys.readouterr().err
    assert sorted(p.name for p in case.parent.iterdir()) == ["mine.yaml"]


def test_list_prints_one_line_per_case_whatever_its_pins_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = tmp_path / "cases" / "compile" / "folded.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("id: folded\ndescription: d\npins: >\n  upstream trims\n\n  twice\nrepo: {}\n")
    assert main(["list", str(tmp_path / "cases")]) == 0
    assert capsys.readouterr().out == "folded\tcompile\t\t\tupstream trims twice\n"  # id, kind, tags, rules, pins


def test_show_help_states_the_fixed_clock_it_compiles_at(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["show", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "default: the fixed 2026-01-02T03:04:05.678Z every case uses, not the time of day" in help_text


def test_list_into_a_closed_pipe_ends_quietly() -> None:
    import sys

    done = subprocess.run(
        f"{sys.executable} -m harness.cli list | head -1", shell=True, capture_output=True, text=True, check=False
    )
    assert done.stdout.count("\n") == 1 and "BrokenPipe" not in done.stderr and "Traceback" not in done.stderr
