"""Ctrl-C (SIGINT to the process group) or SIGTERM during `conformance run` leaves no reference process,
no grandchild of it, and no temporary or half-built directory behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_reference import alive, fake_bundle, install_fake_bun, write_cases

from harness.cases.load import load_scenario
from harness.repo import build as repo
from harness.repo.objects import ObjectWriter

REPO = Path(__file__).resolve().parent.parent


def wait_for(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def descendants(pid: int) -> set[int]:
    """Every live process below pid (from /proc), bun's git children included."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def start_run(tmp_path: Path, args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a shell job is
    )


def interrupt(proc: subprocess.Popen[str], how: str = "SIGINT to the group") -> str:
    """Interrupt the run as a shell would (Ctrl-C reaches the whole group) and return its stderr."""
    try:
        if how == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return err


@pytest.mark.parametrize("how", ["SIGINT to the group", "SIGTERM"])
def test_interrupting_a_run_kills_the_reference_and_its_children_and_leaves_no_temp_dirs(
    tmp_path: Path, how: str
) -> None:
    bin_dir = tmp_path / "bin"
    install_fake_bun(bin_dir)
    cases = write_cases(tmp_path / "cases", {"a-first": "", "b-hang": "hang", "c-never": ""})
    temp = tmp_path / "tmp"
    temp.mkdir()
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "LETTA_CONFORMANCE_CACHE": str(cache),
        "TMPDIR": str(temp),
    }
    proc = start_run(
        tmp_path,
        [
            str(cases),
            "--reference",
            f"bundle:{fake_bundle(tmp_path / 'b')}",
            "--timeout",
            "300",
            "--report",
            str(tmp_path / "report"),
        ],
        env,
    )
    try:
        wait_for(lambda: (bin_dir / "hanging").exists())
        bun_pid, sleep_pid = map(int, (bin_dir / "hanging").read_text().split())
        assert alive(bun_pid) and alive(sleep_pid)
    finally:
        err = interrupt(proc, how)
    assert proc.returncode == (143 if how == "SIGTERM" else 130), err
    assert "interrupted" in err
    wait_for(lambda: not alive(bun_pid) and not alive(sleep_pid), timeout=10)
    assert list(temp.iterdir()) == []
    run = json.loads((tmp_path / "report" / "report.json").read_text())["run"]
    assert run["interrupted"]["by"] == ("SIGTERM" if how == "SIGTERM" else "SIGINT")
    assert [entry["case"] for entry in run["interrupted"]["not_run"]] == ["b-hang", "c-never"]
    repos = cache / "repos"
    assert all((d / ".complete").exists() for d in repos.iterdir()), [d.name for d in repos.iterdir()]


def test_an_interrupt_while_building_a_repository_removes_the_staging_directory(tmp_path: Path, monkeypatch) -> None:
    path = write_cases(tmp_path / "cases", {"a": ""}) / "compile" / "a.yaml"

    def interrupted(self: ObjectWriter, kind: bytes, data: bytes) -> bytes:
        raise KeyboardInterrupt

    monkeypatch.setattr(ObjectWriter, "store", interrupted)
    with pytest.raises(KeyboardInterrupt):
        repo.materialize_repo(load_scenario(path), tmp_path / "cache")
    assert list((tmp_path / "cache" / "repos").iterdir()) == []


@pytest.mark.integration
def test_ctrl_c_during_a_real_run_leaves_no_bun_running(tmp_path: Path, reference_bun, release_bundle) -> None:
    env = {**os.environ, "LETTA_CONFORMANCE_NO_CACHE": "1"}  # a real run: a warm store would answer it in seconds
    proc = start_run(tmp_path, [str(REPO / "cases"), "--report", str(tmp_path / "report")], env)
    seen: set[int] = set()
    try:

        def bun_started() -> bool:
            seen.update(descendants(proc.pid))
            return any(b"driver.mjs" in Path(f"/proc/{p}/cmdline").read_bytes() for p in seen if alive(p))

        wait_for(bun_started, timeout=120)
        time.sleep(0.5)
        seen.update(descendants(proc.pid))
    finally:
        err = interrupt(proc)
    assert proc.returncode == 130, err
    wait_for(lambda: not any(alive(p) for p in seen), timeout=10)


def test_a_run_timeout_stops_a_run_as_sigterm_does_with_a_partial_report(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    install_fake_bun(bin_dir)
    cases = write_cases(tmp_path / "cases", {"a-first": "", "b-hang": "hang", "c-never": ""})
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LETTA_CONFORMANCE_CACHE": str(tmp_path / "cache")}
    proc = start_run(
        tmp_path,
        [
            str(cases),
            "--reference",
            f"bundle:{fake_bundle(tmp_path / 'b')}",
            "--timeout",
            "300",
            "--run-timeout",
            "3",
            "--report",
            str(tmp_path / "report"),
        ],
        env,
    )
    try:
        _, err = proc.communicate(timeout=120)  # the hang would last 300 s without the run's deadline
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    bun_pid, sleep_pid = map(int, (bin_dir / "hanging").read_text().split())
    wait_for(lambda: not alive(bun_pid) and not alive(sleep_pid), timeout=10)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["ok"] is False
    assert report["counts"]["pass"] == 1
    assert report["run"]["interrupted"]["by"] == "--run-timeout 3"
    assert [entry["case"] for entry in report["run"]["interrupted"]["not_run"]] == ["b-hang", "c-never"]


@pytest.mark.integration
def test_sigterm_in_mid_matrix_ends_it_within_10_s_with_143_every_child_gone_and_a_partial_report(
    tmp_path: Path, reference_bun, release_bundle
) -> None:
    """What `timeout 300 conformance matrix` does at its deadline: before, exit 130 after 449 s of compiling in
    process; now every reference, port worker and implementation is killed and the run ends at once."""
    env = {**os.environ, "LETTA_CONFORMANCE_NO_CACHE": "1"}  # the references really run: there is a child to stop
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "matrix",
            str(REPO / "cases"),
            "-k",
            "core-memory-absent",
            "--report",
            str(tmp_path / "report"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen: set[int] = set()
    try:

        def driver_answering() -> bool:
            seen.update(descendants(proc.pid))
            return any(b"driver.mjs" in Path(f"/proc/{p}/cmdline").read_bytes() for p in seen if alive(p))

        wait_for(driver_answering, timeout=300)  # (a release not in the cache is downloaded first)
        time.sleep(1.0)
        seen.update(descendants(proc.pid))
        told = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - told
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert took < 10, f"exited {took:.1f} s after SIGTERM"
    assert "did not end within" not in err  # it stopped by itself, not by the watchdog
    wait_for(lambda: not any(alive(p) for p in seen), timeout=10)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    interrupted = report["run"]["interrupted"]
    assert report["ok"] is False and interrupted["by"] == "SIGTERM"
    assert interrupted["not_run"], "a matrix stopped in its first column has cases left"
    ran = {(r["case"], r["reference"]) for r in report["results"]}
    assert not any((e["case"], label) in ran for e in interrupted["not_run"] for label in e["references"])


def test_a_partial_report_is_marked_interrupted_never_ok_and_lists_what_did_not_run(tmp_path: Path) -> None:
    import jsonschema
    from report_examples import case, record

    from harness.core.model import Outcome, RunReport, Status
    from harness.report.writers import write_reports
    from harness.run.meta import interrupted, run_metadata

    ok = Outcome("ok", record=record("persona: helpful"))
    meta = run_metadata(["conformance", "matrix"], [], None, None)
    meta["interrupted"] = interrupted("SIGTERM", {"z-last": ["0.25.3"], "b-hang": ["0.25.3", "pypi:0.34.12"]})
    passing = [case("a-pass", Status.PASS, (), ok, ok)]
    paths = write_reports(RunReport(passing, [], [], ["conformance", "matrix"], extra={"run": meta}), tmp_path)
    report = json.loads(Path(paths["json"]).read_text())
    schema = json.loads((REPO / "harness" / "report" / "schema.json").read_text())
    jsonschema.validate(report, schema)
    assert report["ok"] is False  # every result passed, but the run did not finish: never a pass
    assert report["run"]["interrupted"] == {
        "by": "SIGTERM",
        "not_run": [
            {"case": "b-hang", "references": ["0.25.3", "pypi:0.34.12"]},
            {"case": "z-last", "references": ["0.25.3"]},
        ],
    }
    assert "INTERRUPTED (SIGTERM): 1 result, 0 failing; 2 cases not run" in Path(paths["html"]).read_text()
