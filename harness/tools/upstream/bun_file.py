"""One upstream test file under `bun test` (the pinned bun), read back from bun's junit report and the
shim's call log.

- Each file runs in its own bun process (`bun test --no-install ./FILE`: bun never installs a package on
  its own), from the source tree's root as upstream runs its tests, with a fresh HOME and TMPDIR, the
  pinned locale and zone, no git configuration, and a registry address nothing listens on.
- A file that does not load (bun writes no junit entry for it), that bun ends early, or that fails
  between tests has `load_error`: the end of bun's output.
- In the shim run, reference/upstream-tests/preload.ts marks each test's start in the call log: the n-th
  mark is the n-th test bun ran (a test skipped or todo has none), so each forwarded call belongs to one
  test. When the marks do not match bun's tests (a failing beforeAll, retries), `attributed` is False and
  every call counts for the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from harness.repo.gitenv import isolated_env
from harness.report.upstream_records import FileRun, Outcome, TestRun

OUTPUT_TAIL = 6000  # characters of bun's output kept with a file
UNREACHABLE_REGISTRY = "http://127.0.0.1:9/"  # where bun would fetch from, if it ever tried


def test_env(bun: Path, home: Path, tmp: Path) -> dict[str, str]:
    """The environment of a `bun test` process (the control run and the shim run alike)."""
    env = isolated_env(home, extra_path=[str(bun.parent)])
    for pinned in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):  # upstream's tests make commits of their own
        env.pop(pinned, None)
    env.update(
        {
            "TMPDIR": str(tmp),
            "BUN_CONFIG_REGISTRY": UNREACHABLE_REGISTRY,
            "NPM_CONFIG_REGISTRY": UNREACHABLE_REGISTRY,
            "LETTA_CODE_TELEM": "0",
            "NO_COLOR": "1",
        }
    )
    return env


def run_file(
    bun: Path,
    root: Path,
    file: str,
    *,
    timeout: float,
    preload: Path | None = None,
    extra_env: dict[str, str] | None = None,
    test_timeout_ms: int | None = None,
) -> FileRun:
    """`bun test ./FILE` in `root`; with `preload`, the shim run's marks and call log are read too."""
    scratch = Path(tempfile.mkdtemp(prefix="conformance-upstream-test-"))
    try:
        home, tmp = scratch / "home", scratch / "tmp"
        tmp.mkdir(parents=True)
        junit, log = scratch / "junit.xml", scratch / "calls.jsonl"
        env = test_env(bun, home, tmp)
        env.update(extra_env or {})
        command = [str(bun), "test", "--no-install"]
        if preload is not None:
            command += ["--preload", str(preload)]
            env["CONFORMANCE_UPSTREAM_LOG"] = str(log)
        if test_timeout_ms:
            command += ["--timeout", str(test_timeout_ms)]
        command += [f"./{file}", "--reporter=junit", f"--reporter-outfile={junit}"]
        started = time.perf_counter()
        exit_code, output = _run(command, root, env, timeout)
        seconds = round(time.perf_counter() - started, 3)
        tests = read_junit(junit, file)
        run = FileRun(file, exit_code, seconds, tests, output_tail=output[-OUTPUT_TAIL:])
        if exit_code is None:
            run.load_error = f"bun test did not finish within {timeout:g} s (killed)"
        elif not tests and not junit_has_file(junit, file):
            run.load_error = load_error_text(output) or f"bun test exited {exit_code} and reported no test"
        elif exit_code != 0 and not any(t.outcome == Outcome.FAILED for t in tests):
            run.load_error = load_error_text(output) or f"bun test exited {exit_code} with no failing test"
        if preload is not None:
            attribute_calls(run, read_log(log))
        return run
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:  # the bun process and whatever its tests started
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        output.seek(0)
        return code, output.read().decode("utf-8", "replace")


def load_error_text(output: str) -> str:
    """bun's words for an error outside any test (`# Unhandled error between tests` and what follows, up to its
    closing rule), else from its first `error: `; '' when it printed neither."""
    marker = output.find("# Unhandled error between tests")
    if marker >= 0:
        body, rules = [], 0
        for line in output[marker:].splitlines():
            if line.startswith("-----"):
                rules += 1
                if rules == 2:
                    break
                continue
            body.append(line)
        return "\n".join(body).strip()[:2000]
    marker = output.find("error: ")
    return output[marker : marker + 1500].strip() if marker >= 0 else ""


def junit_has_file(junit: Path, file: str) -> bool:
    try:
        root = ElementTree.parse(junit).getroot()
    except (OSError, ElementTree.ParseError):
        return False
    return any(suite.get("file") == file or suite.get("name") == file for suite in root.iter("testsuite"))


def read_junit(junit: Path, file: str) -> list[TestRun]:
    """The tests of `file` in bun's junit report, in the order bun ran them (its nesting of describes)."""
    try:
        root = ElementTree.parse(junit).getroot()
    except (OSError, ElementTree.ParseError):
        return []
    tests: list[TestRun] = []

    def walk(element: ElementTree.Element, path: list[str]) -> None:
        for child in element:
            if child.tag == "testsuite":
                top = child.get("file") == child.get("name") and not path
                walk(child, path if top else [*path, child.get("name") or ""])
            elif child.tag == "testcase":
                tests.append(_test_of(child, file, path))

    walk(root, [])
    return tests


def _test_of(case: ElementTree.Element, file: str, path: list[str]) -> TestRun:
    name = " > ".join([*path, case.get("name") or ""])
    line = int(case.get("line") or 0) or None
    seconds = float(case.get("time") or 0)
    failure = case.find("failure")
    if failure is None:
        failure = case.find("error")
    if failure is not None:
        message = failure.get("message") or ""
        kind = failure.get("type") or "Error"
        return TestRun(file, name, Outcome.FAILED, f"{kind}: {message}".strip(), failure.text or "", line, seconds)
    skipped = case.find("skipped")
    if skipped is not None:
        todo = (skipped.get("message") or "").upper() == "TODO"
        return TestRun(file, name, Outcome.TODO if todo else Outcome.SKIPPED, skipped.get("message") or "", "", line)
    return TestRun(file, name, Outcome.PASSED, line=line, seconds=seconds)


def read_log(log: Path) -> list[dict[str, Any]]:
    entries = []
    with contextlib.suppress(OSError):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    entries.append(entry)
    return entries


def attribute_calls(run: FileRun, entries: list[dict[str, Any]]) -> None:
    """Each call of the log to the test that made it (the rule in the module docstring)."""
    current, marks = -1, 0
    for entry in entries:
        if "test" in entry and "call" not in entry:
            marks += 1
            current = marks - 1
            continue
        run.calls.append(entry)
        run.calls_by_test.append(current)
    ran = [t for t in run.tests if t.outcome in (Outcome.PASSED, Outcome.FAILED)]
    run.attributed = marks == len(ran)
