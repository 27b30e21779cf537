"""Fault injection through `conformance run`: every fault ends as an error or a failure with a reason,
the other cases of the run are still judged, and the exit code is non-zero. Never a pass.

The reference is tests/fake_reference.py's fake `bun` on PATH (the real BunReferenceRunner path:
ensure_bun, isolated environment, JSON lines); npm is a fake on PATH too, so nothing is downloaded.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_reference import fake_bundle, install_fake_bun, pids_started, write_cases

from harness.cli import main as cli
from harness.repo.objects import ObjectWriter
from harness.runners import jsonl_process

FAKE_NPM = r"""#!{python}
import sys
from pathlib import Path
args = sys.argv[1:]
mode = Path(__file__).with_name("npm-mode").read_text().strip()
if mode == "fail":
    sys.stderr.write("npm ERR! code ENOTFOUND\nnpm ERR! network request failed\n")
    sys.exit(1)
dest = Path(args[args.index("--pack-destination") + 1])
(dest / "pkg-1.0.0.tgz").write_bytes(b"not the pinned tarball")
print("[]")
"""


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH directory holding a fake bun (pinned version) and a fake npm; an empty cache."""
    directory = tmp_path / "bin"
    install_fake_bun(directory)
    npm = directory / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable))
    npm.chmod(0o755)
    (directory / "npm-mode").write_text("fail\n")
    monkeypatch.setenv("PATH", f"{directory}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return directory


def run(tmp_path: Path, cases: dict[str, str], *extra: str, reference: str | None = None) -> tuple[int, dict]:
    """`conformance run` in process on the given cases; returns (exit code, report.json)."""
    cases_dir = write_cases(tmp_path / "cases", cases)
    bundle = fake_bundle(tmp_path / "bundle")
    report_dir = tmp_path / "report"
    argv = [
        "run",
        str(cases_dir),
        "--reference",
        reference or f"bundle:{bundle}",
        "--report",
        str(report_dir),
        "--no-timing",
        *extra,
    ]
    code = cli.main(argv)
    report = json.loads((report_dir / "report.json").read_text()) if (report_dir / "report.json").exists() else {}
    return code, report


def statuses(report: dict) -> dict[str, str]:
    return {r["case"]: r["status"] for r in report["results"]}


def reasons(report: dict, case_id: str) -> str:
    from harness.report.stored import full_entries  # a passing result leaves out empty reasons

    return "\n".join(next(r for r in full_entries(report) if r["case"] == case_id)["reasons"])


def test_honest_fake_reference_passes(tmp_path: Path, bin_dir: Path) -> None:
    # The control: without a fault the fake agrees, so every failure below is the fault's doing.
    code, report = run(tmp_path, {"a-honest": "", "b-honest": ""})
    assert statuses(report) == {"a-honest": "pass", "b-honest": "pass"}
    assert code == 0
    assert len(pids_started(bin_dir)) == 1  # one process for the whole run


PROCESS_FAULTS = {
    "crash": ("error", "exited (code 3) without answering"),
    "hang": ("error", "no answer within 5 s"),
    "garbage": ("error", "not JSON"),
    "partial": ("error", "in the middle of an answer line"),
    "stale-id": ("error", "does not match request id"),
    "future-id": ("error", "does not match request id"),
    "not-ok": ("error", "fake bun refuses this request"),
    "no-record": ("error", "answer has no record"),
    "wrong": ("fail", ""),
}


@pytest.mark.parametrize("fault", list(PROCESS_FAULTS))
def test_a_reference_fault_is_never_a_pass_and_the_run_goes_on(tmp_path: Path, bin_dir: Path, fault: str) -> None:
    status, reason = PROCESS_FAULTS[fault]
    code, report = run(tmp_path, {"a-before": "", "b-fault": fault, "c-after": ""}, "--timeout", "5")
    assert statuses(report) == {"a-before": "pass", "b-fault": status, "c-after": "pass"}
    assert reason in reasons(report, "b-fault")
    assert code == 1
    if status == "fail":
        diff = next(r for r in report["results"] if r["case"] == "b-fault")["diffs"]
        assert "coreMemory" in {d["field"] for d in diff}


def test_an_answer_line_over_the_limit_is_an_error(tmp_path: Path, bin_dir: Path, monkeypatch) -> None:
    monkeypatch.setattr(jsonl_process, "MAX_LINE_BYTES", 1 << 20)  # the fake writes 4 MiB without a newline
    code, report = run(tmp_path, {"a-before": "", "b-fault": "huge", "c-after": ""}, "--timeout", "30")
    assert statuses(report) == {"a-before": "pass", "b-fault": "error", "c-after": "pass"}
    assert "longer than 1048576 bytes" in reasons(report, "b-fault")
    assert code == 1


def test_a_second_answer_does_not_become_the_next_cases_answer(tmp_path: Path, bin_dir: Path) -> None:
    # `twice` answers correctly and then again: the extra line is left over. The next case must be
    # judged on its own answer, from a fresh process, not errored (or worse, given the stale record).
    code, report = run(tmp_path, {"a-twice": "twice", "b-after": "", "c-after": ""})
    assert statuses(report) == {"a-twice": "pass", "b-after": "pass", "c-after": "pass"}
    assert len(pids_started(bin_dir)) == 2
    assert code == 0


def test_pollution_restarts_the_reference_and_later_cases_are_judged_in_a_fresh_process(
    tmp_path: Path, bin_dir: Path
) -> None:
    cases = {"a-first": "", "b-polluted": "polluted", "c-next": "", "d-polluted-wrong": "polluted-wrong", "e-last": ""}
    code, report = run(tmp_path, cases)
    assert statuses(report) == {
        "a-first": "pass",
        "b-polluted": "pass",
        "c-next": "pass",
        "d-polluted-wrong": "fail",
        "e-last": "pass",
    }
    assert "polluted a shared prototype" in reasons(report, "b-polluted")
    assert len(pids_started(bin_dir)) == 3
    assert code == 1


def test_a_bundle_the_reference_cannot_load_errors_every_case(tmp_path: Path, bin_dir: Path) -> None:
    bundle = fake_bundle(tmp_path / "broken")
    bundle.write_text("truncated garb")
    code, report = run(tmp_path, {"a": "", "b": ""}, reference=f"bundle:{bundle}")
    assert statuses(report) == {"a": "error", "b": "error"}
    assert "cannot load bundle" in reasons(report, "a")
    assert code == 1


def test_a_missing_bundle_is_refused_before_any_case_runs(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = run(tmp_path, {"a": ""}, reference=f"bundle:{tmp_path / 'nowhere' / 'letta.js'}")
    assert code == 2 and report == {}  # one error up front, no report
    assert "no such bundle file" in capsys.readouterr().err


def test_bun_of_the_wrong_version_is_not_used(tmp_path: Path, bin_dir: Path) -> None:
    install_fake_bun(bin_dir, version="1.0.0")  # the pinned one cannot be fetched: npm fails
    code, report = run(tmp_path, {"a": "", "b": ""})
    assert statuses(report) == {"a": "error", "b": "error"}
    message = reasons(report, "a")
    assert "is 1.0.0, not the pinned" in message and "ENOTFOUND" in message
    assert pids_started(bin_dir) == []
    assert code == 1


def test_bun_missing_and_npm_missing_say_so(tmp_path: Path, bin_dir: Path, monkeypatch) -> None:
    (bin_dir / "bun").unlink()
    (bin_dir / "npm").unlink()
    monkeypatch.setenv("PATH", str(bin_dir))  # no system npm either (git is found by isolated_env's fallback)
    code, report = run(tmp_path, {"a": ""})
    assert statuses(report) == {"a": "error"}
    assert "bun is not on PATH" in reasons(report, "a") and "npm is not on PATH" in reasons(report, "a")
    assert code == 1


def test_a_release_tarball_with_other_bytes_errors_every_case(tmp_path: Path, bin_dir: Path) -> None:
    (bin_dir / "npm-mode").write_text("tamper\n")
    code, report = run(tmp_path, {"a": "", "b": ""}, reference="npm:0.32.18")
    assert statuses(report) == {"a": "error", "b": "error"}
    assert "integrity mismatch" in reasons(report, "a")
    assert not (tmp_path / "cache" / "letta-code" / "0.32.18" / ".verified").exists()
    assert code == 1


def test_disk_full_while_materializing_errors_that_case_only(tmp_path: Path, bin_dir: Path, monkeypatch) -> None:
    real = ObjectWriter.store

    def store(self: ObjectWriter, kind: bytes, data: bytes) -> bytes:
        if b"b-disk-full" in data:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, kind, data)

    monkeypatch.setattr(ObjectWriter, "store", store)
    code, report = run(tmp_path, {"a-before": "", "b-disk-full": "", "c-after": ""})
    assert statuses(report) == {"a-before": "pass", "b-disk-full": "error", "c-after": "pass"}
    assert "No space left on device" in reasons(report, "b-disk-full")
    assert code == 1
    repos = tmp_path / "cache" / "repos"
    assert not [p.name for p in repos.iterdir() if p.name.startswith(".build-")]  # staging removed
    assert all((p / ".complete").exists() for p in repos.iterdir())  # nothing half-built is kept

    monkeypatch.setattr(ObjectWriter, "store", real)  # space again: the case builds and passes
    code, report = run(tmp_path, {"a-before": "", "b-disk-full": "", "c-after": ""})
    assert set(statuses(report).values()) == {"pass"} and code == 0


def test_an_unwritable_report_directory_is_a_clear_error_not_a_traceback(tmp_path: Path, bin_dir: Path, capsys):
    cases_dir = write_cases(tmp_path / "cases", {"a": ""})
    blocker = tmp_path / "report"
    blocker.write_text("a file where the report directory should be")
    code = cli.main(
        ["run", str(cases_dir), "--reference", f"bundle:{fake_bundle(tmp_path / 'b')}", "--report", str(blocker)]
    )
    assert code == 2
    assert "error:" in capsys.readouterr().err


# --- scenario files ---------------------------------------------------------------------------------

BAD_FILES: dict[str, tuple[bytes, str]] = {
    "malformed.yaml": (b"id: malformed\ndescription: [unclosed\nrepo: {}\n", "malformed.yaml:3: invalid YAML"),
    "schema.yaml": (b"id: schema\ndescription: d\nrepo:\n  kind: svn\n", "schema.yaml:4: repo/kind"),
    "unknown-key.yaml": (
        b"id: unknown-key\ndescription: d\nrepo: {}\nrefernce: x\n",
        "unknown-key.yaml:4: unknown key 'refernce'",
    ),
    "latin1.yaml": (b"id: latin1\ndescription: caf\xe9\nrepo: {}\n", "latin1.yaml:2: not UTF-8"),
    "dup.yaml": (b"id: a-good\ndescription: d\nrepo: {}\n", "dup.yaml:1: id 'a-good' is not the file name"),
    "not-a-mapping.yaml": (b"- just\n- a list\n", "not-a-mapping.yaml:1: a scenario is a mapping"),
    "empty.yaml": (b"", "empty.yaml:1: a scenario is a mapping"),
    "alias.yaml": (
        b"id: alias\ndescription: d\nx: &a [1, 2]\nrepo:\n  commits:\n    - files: *a\n",
        "alias.yaml:6: YAML alias *a is not allowed",
    ),
    "huge-repeat.yaml": (
        b'id: huge-repeat\ndescription: d\nrepo:\n  commits:\n    - files:\n        a.md: {text: "0123456789", '
        b"repeat: 100000000000}\n",
        "huge-repeat.yaml:6: a.md: text x repeat is 1000000000000 bytes",
    ),
    "oversized.yaml": (
        b"id: oversized\ndescription: d\nrepo: {}\n# " + b"x" * (1024 * 1024) + b"\n",
        "oversized.yaml: 1048617 bytes is over the 1048576-byte limit",
    ),
}


def test_bad_scenario_files_are_errors_with_file_and_line_and_the_good_cases_still_run(
    tmp_path: Path, bin_dir: Path, capsys
) -> None:
    cases_dir = write_cases(tmp_path / "cases", {"a-good": "", "z-good": ""})
    for name, (data, _) in BAD_FILES.items():
        (cases_dir / "compile" / name).write_bytes(data)
    code = cli.main(
        [
            "run",
            str(cases_dir),
            "--reference",
            f"bundle:{fake_bundle(tmp_path / 'b')}",
            "--report",
            str(tmp_path / "report"),
            "--no-timing",
        ]
    )
    err = capsys.readouterr().err
    for name, (_, message) in BAD_FILES.items():
        assert message in err, name
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert statuses(report) == {"a-good": "pass", "z-good": "pass"}
    assert report["counts"]["load-error"] == len(BAD_FILES)
    assert report["ok"] is False
    assert code == 1


def test_x_stops_after_the_first_failure_and_the_summary_names_it(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = run(tmp_path, {"a": "", "b": "wrong", "c": "wrong", "d": ""}, "-x", "--durations", "2")
    assert code == 1 and statuses(report) == {"a": "pass", "b": "fail"}  # c and d never started
    out, err = capsys.readouterr()
    assert "stopped after 1 failing result (-x/--maxfail)" in err
    assert "=== 1 failing result ===" in out and "FAIL b [" in out and "coreMemory byte" in out
    assert "=== slowest 2 results ===" in out
    assert report["run"]["command"][:2] == ["conformance", "run"] or report["run"]["harness"]["version"]


def test_lf_reruns_only_what_failed_in_the_previous_report(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = run(tmp_path, {"a": "", "b": "wrong", "c": ""})
    assert code == 1 and statuses(report) == {"a": "pass", "b": "fail", "c": "pass"}
    capsys.readouterr()
    code, report = run(tmp_path, {"a": "", "b": "wrong", "c": ""}, "--lf")
    assert code == 1 and "1 result: 1 fail in" in capsys.readouterr().out  # only b ran
    code, report = run(tmp_path, {"a": "", "b": "", "c": ""}, "--lf")  # fixed: b passes now
    assert code == 0 and "--lf: 1 case failed in the previous report" in capsys.readouterr().err


def test_lf_merges_the_rerun_into_the_previous_report_so_nothing_it_read_is_lost(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    run(tmp_path, {"a": "", "b": "wrong", "c": ""})
    shutil.copytree(tmp_path / "report", tmp_path / "old")
    code, report = run(tmp_path, {"a": "", "b": "", "c": ""}, "--lf")  # b fixed; only b re-run
    assert code == 0 and statuses(report) == {"a": "pass", "b": "pass", "c": "pass"}
    assert report["run"]["last_failed"] == {"report": str(tmp_path / "report" / "report.json"), "rerun": 1, "kept": 2}
    import jsonschema

    jsonschema.validate(report, json.loads((Path(cli.__file__).parents[1] / "report" / "schema.json").read_text()))
    assert "(1 result re-run, the other 2 kept)" in capsys.readouterr().out
    assert cli.main(["compare-reports", str(tmp_path / "old"), str(tmp_path / "report")]) == 0
    out = capsys.readouterr().out
    assert "fixes: 1 (failed before, now agree)\n  b [" in out and "results no longer present: 0\n" in out


def test_maxfail_and_k_expressions_select_and_stop(tmp_path: Path, bin_dir: Path) -> None:
    code, report = run(
        tmp_path, {"a1": "wrong", "a2": "wrong", "a3": "wrong", "b1": ""}, "--maxfail", "2", "-k", "a and not b"
    )
    assert code == 1 and statuses(report) == {"a1": "fail", "a2": "fail"}


def test_compare_reports_names_regressions_fixes_and_new_cases(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    run(tmp_path, {"a": "", "b": "wrong", "c": ""})
    shutil.copytree(tmp_path / "report", tmp_path / "old")
    shutil.rmtree(tmp_path / "cases")
    run(tmp_path, {"a": "wrong", "b": "", "c": "", "d": ""})
    capsys.readouterr()
    assert cli.main(["compare-reports", str(tmp_path / "old"), str(tmp_path / "report")]) == 1
    out = capsys.readouterr().out
    assert "regressions: 1 (the implementation does worse: it agreed and now diverges, or now cannot run)\n  a [" in out
    assert "pass -> fail" in out
    assert "fixes: 1 (failed before, now agree)\n  b [" in out and "new results: 1\n  d [" in out
    assert cli.main(["compare-reports", str(tmp_path / "old"), str(tmp_path / "no-such")]) == 2


def test_show_prints_the_references_full_output(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = tmp_path / "memory"
    (memory / "system").mkdir(parents=True)
    (memory / "system" / "persona.md").write_text("I am.\n")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", "-C", str(memory), *command], check=True)
    bundle = fake_bundle(tmp_path / "bundle")
    assert cli.main(["show", str(memory), "--reference", f"bundle:{bundle}", "--field", "coreMemory"]) == 0
    out = capsys.readouterr().out
    assert "I am." in out and "<memory" in out
    assert cli.main(["show", str(tmp_path / "nothing"), "--reference", f"bundle:{bundle}"]) == 2
