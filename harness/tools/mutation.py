"""Mutation testing of memfs_prompt/ against the corpus: does every hand-written mutant make a case fail?

Mutants are data (mutants/mutants.yaml; the format and its checks: harness.tools.mutant_file): a file under
memfs_prompt/, a snippet that must occur in it exactly once, its replacement, and why the change matters.
Each mutant is applied to a temporary copy of the package; the corpus then runs with that copy first on
PYTHONPATH, against reference records recorded once per run from the real releases (the references are not
mutated, so replaying their answers is the same as asking them again). A mutant is killed when any
case's verdict changes from the unmutated run (or the port crashes or hangs); it survives when
every verdict stays the same. A surviving mutant must be listed with `equivalent: <why>` (no case
can tell it apart; not scored) or `known_survivor: <why>` (scored as survived, does not fail the
session); a listed mutant that gets killed is reported as invalid, so the notes stay true.

The corpus runs four ways, cheapest first, each pass only for a mutant the ones before did not kill:
every compile case through the port's Python API against every reference, as the matrix (and so the gate)
compiles: a case under every profile of the run from one reading of its HEAD, in a worker process
(harness.run.port_pool, memfs_prompt.compiler.one_reading_of_head); every compile case once
through its protocol server as a warm process (`--impl "cmd:python -m memfs_prompt serve"`,
harness.runners.command); the lifecycle probes against the live references; every compile case once
through the port's command line (`python -m memfs_prompt compile`, harness.runners.python_cli, a
process per case). The two entry points take the references in turn, so that a mutant of serve.py or
cli.py can be killed.

    conformance mutation [CASES...] [--reference npm:X ...] [--mutants FILE_OR_DIR ...] [-k ID]

By default: every file in mutants/, against one pinned release per profile (`default_references`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.acquire.manifest import REPO_ROOT
from harness.core.model import CaseResult, CompileRequest, Outcome, Scenario
from harness.core.reference import ReferenceSpec, pinned_references
from harness.runners.base import Runner
from harness.runners.implementations import ImplSpec
from harness.tools import mutant_file
from harness.tools.mutant_file import PACKAGE
from harness.tools.mutant_file import Mutant as Mutant  # the format is mutant_file's
from harness.tools.mutant_file import mutant_files as mutant_files
from letta_profiles import PROFILE_RELEASES

DEFAULT_MUTANTS = REPO_ROOT / "mutants"  # every *.yaml there (mutants.yaml, blind.yaml, ...)
MATRIX_PASS = "Python API, as the matrix compiles"  # one reading of HEAD per case, in a worker process


#: The unmutated port, run first as every mutant is: it must reproduce the baseline's verdicts (survive), or a
#: failure of the environment (a worker pool that cannot start, a reference that went away) would read as a kill.
CONTROL = Mutant("unmutated-control", "", "", "", "the port as it is: every verdict matches the baseline")


def load_mutants(paths: Path | list[Path]) -> list[Mutant]:
    """Every mutant of these files (or directories), checked against the checkout's memfs_prompt/
    (harness.tools.mutant_file: ScenarioError at the first problem, with its file and line)."""
    return mutant_file.load_mutants(paths, REPO_ROOT / PACKAGE)


def entry_points() -> list[tuple[ImplSpec, str]]:
    """The port's two processes a user runs, beside the API: its command line and its protocol server (with
    this Python, so the mutated copy on PYTHONPATH is what it imports), each named as a killing pass names it."""
    serve = f"{shlex.quote(sys.executable)} -m {PACKAGE} serve"
    return [(ImplSpec("python-cli"), f"python -m {PACKAGE}"), (ImplSpec("cmd", serve), f"python -m {PACKAGE} serve")]


def default_references() -> list[str]:
    """One pinned release per profile: the first pinned, in release order, of the releases it reproduces."""
    chosen: dict[str, str] = {}
    for spec in pinned_references():
        for name, releases in PROFILE_RELEASES.items():
            if spec.value in releases:
                chosen.setdefault(name, f"{spec.kind}:{spec.value}")
    return list(chosen.values())


def request_key(request: CompileRequest) -> str:
    return json.dumps(request.to_wire(), sort_keys=True, ensure_ascii=True)


# --- the baseline: real references, unmutated port ------------------------------------------------


def record_baseline(paths: list[Path], references: list[str], out: Path) -> dict[str, Any]:
    """Run the corpus for real once; keep every reference compile answer and every verdict."""
    from harness.cases.load import load_scenarios
    from harness.run.corpus import RunOptions, run_corpus
    from harness.runners.bun_reference import BunReferenceRunner

    loaded = load_scenarios(paths)
    if loaded.errors:
        raise ValueError("; ".join(str(e) for e in loaded.errors))
    specs = [ReferenceSpec.parse(r) for r in references]
    answers: dict[str, dict[str, Any]] = {spec.label: {} for spec in specs}

    class Recording(BunReferenceRunner):
        def compile(self, request: CompileRequest) -> Outcome:
            outcome = super().compile(request)
            answers[self.spec.label][request_key(request)] = outcome.to_json()
            return outcome

    options = RunOptions(specs, runner_factory=lambda spec, cache: Recording(spec, cache / "home", cache / "repos"))
    results = run_corpus(loaded.scenarios, options).results
    errors = [r for r in results if r.status == "error"]
    if errors:
        raise RuntimeError(f"the unmutated run has errors ({errors[0].case_id}: {errors[0].reasons}); fix those first")
    baseline = {
        "references": references,
        "answers": answers,
        "verdicts": {f"{r.case_id} [{r.reference}]": r.status for r in results},
    }
    out.write_text(json.dumps(baseline, sort_keys=True), encoding="utf-8")
    return baseline


class ReplayRunner(Runner):
    """A reference that answers what the real one answered in the baseline run."""

    def __init__(self, spec: ReferenceSpec, answers: dict[str, Any]) -> None:
        self.name = spec.runner_name
        self.answers = answers

    def compile(self, request: CompileRequest) -> Outcome:
        data = self.answers.get(request_key(request))
        if data is None:
            return Outcome("error", error="no recorded reference answer for this request")
        return Outcome(**data)


# --- one mutant (runs in a subprocess with the mutated copy first on sys.path) -----------------------


def check(baseline_path: Path, paths: list[Path], expected_package: Path) -> int:
    """Replay the corpus; 0 when every verdict matches the baseline, 1 (and the first change) otherwise."""
    found = importlib.util.find_spec(PACKAGE)  # where the port runners will import it from (not imported here)
    loaded_from = Path(found.origin).resolve().parent if found and found.origin else None
    if loaded_from != expected_package.resolve():
        print(f"the mutated copy was not imported: memfs_prompt came from {loaded_from}", file=sys.stderr)
        return 3
    from harness.cases.load import load_scenarios
    from harness.runners.python_port import PythonPortRunner

    replay = Replay(baseline_path)
    scenarios = load_scenarios(paths).scenarios
    compile_cases = [s for s in scenarios if s.kind == "compile"]
    lifecycle_cases = [s for s in scenarios if s.kind == "lifecycle"]
    port_compile, outcomes = PythonPortRunner.compile, PortOutcomes()
    # Compile cases against the recorded answers through the API as the matrix (and so the gate) calls it, then
    # through the protocol server; the lifecycle probes against the live references, since a turn loop's answers
    # depend on the conversation so far; then the compile cases through the command line, a process per case.
    # Cheapest first: a pass runs only for a mutant the ones before did not kill.
    (cli, cli_how), (serve, serve_how) = entry_points()
    if code := replay.as_the_matrix_does(compile_cases, outcomes):
        return code
    if code := replay.through(compile_cases, serve, serve_how):
        return code
    PythonPortRunner.compile = port_compile  # type: ignore[method-assign]
    if code := replay.lifecycle(lifecycle_cases):
        return code
    PythonPortRunner.compile = outcomes.compile_once(port_compile)  # type: ignore[method-assign]
    return replay.through(compile_cases, cli, cli_how)


class PortOutcomes(dict[tuple[str, str], Outcome]):
    """The port's outcomes by (profile, request): references that share a profile get the same port record, so
    the port compiles once per profile and request."""

    def compile_once(self, port_compile: Callable[[Any, CompileRequest], Outcome]) -> Callable[..., Outcome]:
        def compile_once(runner: Any, request: CompileRequest) -> Outcome:
            key = (runner.profile.name, request_key(request))
            if key not in self:
                self[key] = port_compile(runner, request)
            return self[key]

        return compile_once

    def in_pool(self, pool: Any, profiles: list[str]) -> Callable[..., Outcome]:
        """The port's compile as a matrix gets it (harness.run.by_reference, harness.run.port_pool): a case's request
        under every profile of the run, in a worker process, from one reading of its HEAD; asked for a case's
        first profile, it computes them all."""

        def compile_in_pool(runner: Any, request: CompileRequest) -> Outcome:
            key = (runner.profile.name, request_key(request))
            if key not in self:
                group = request_key(replace(request, profile=None))
                wanted = profiles if runner.profile.name in profiles else [*profiles, runner.profile.name]  # golden
                pool.start([(group, wanted, request)])
                for profile in wanted:
                    found = pool.outcome(group, profile)  # None: the worker process failed (it warned why)
                    self[profile, request_key(replace(request, profile=profile))] = found or Outcome(
                        "error", error="the port's worker process failed (the matrix's compile path)"
                    )
            return self[key]

        return compile_in_pool


class Replay:
    """The corpus run again against the baseline's recorded reference answers, each verdict held to the
    baseline's: the first one that changed ends the check (1), a case the baseline lacks is invalid (3)."""

    def __init__(self, baseline_path: Path) -> None:
        self.path = baseline_path
        self.baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
        self.specs = [ReferenceSpec.parse(r) for r in self.baseline["references"]]

    def replayed(self, spec: ReferenceSpec, cache: Path) -> Runner:
        return ReplayRunner(spec, self.baseline["answers"][spec.label])

    def verdicts_hold(self, results: list[CaseResult], how: str) -> int:
        for result in results:
            key = f"{result.case_id} [{result.reference}]"
            expected = self.baseline["verdicts"].get(key)
            if expected is None:
                print(f"{key} is not in the baseline: record it again (delete {self.path})", file=sys.stderr)
                return 3
            if result.status != expected:
                fields = {d.field for d in result.diffs} | {
                    d["observation"] for row in result.turns for d in row.get("diffs", [])
                }
                detail = ", ".join(sorted(fields)) or "; ".join(result.reasons[:1])
                print(f"{key}: {expected} -> {result.status} " + (f"({detail}) " if detail else "") + f"[{how}]")
                return 1
        return 0

    def as_the_matrix_does(self, compile_cases: list[Scenario], outcomes: PortOutcomes) -> int:
        """Every compile case through the port's API in a worker process, as the matrix compiles."""
        from harness.run.corpus import RunOptions, open_session
        from harness.run.port_pool import PortPool
        from harness.runners.python_port import PythonPortRunner

        options = RunOptions(self.specs, runner_factory=self.replayed)
        with open_session(options) as session, PortPool(1, session.git_env) as pool:
            profiles = list(dict.fromkeys(ref.profile for ref in session.references))
            PythonPortRunner.compile = outcomes.in_pool(pool, profiles)  # type: ignore[method-assign]
            for scenario in compile_cases:
                if code := self.verdicts_hold(session.run_case(scenario), MATRIX_PASS):
                    return code
        return 0

    def through(self, compile_cases: list[Scenario], impl: ImplSpec, how: str) -> int:
        """Every compile case once through `impl`, the references taking turns."""
        from harness.run.corpus import RunOptions, open_session

        with contextlib.ExitStack() as stack:
            sessions = [
                stack.enter_context(
                    open_session(RunOptions([spec], runner_factory=self.replayed, implementations=[impl]))
                )
                for spec in self.specs
                if not spec.is_variant
            ]
            for index, scenario in enumerate(compile_cases):
                turns = (sessions[(index + turn) % len(sessions)].run_case(scenario) for turn in range(len(sessions)))
                if code := self.verdicts_hold(next((r for r in turns if r), []), how):
                    return code
        return 0

    def lifecycle(self, lifecycle_cases: list[Scenario]) -> int:
        """The lifecycle probes against the live references (a turn loop's answers depend on the conversation)."""
        from harness.run.corpus import RunOptions, open_session

        if not lifecycle_cases:
            return 0
        with open_session(RunOptions(self.specs)) as session:
            for scenario in lifecycle_cases:
                if code := self.verdicts_hold(session.run_case(scenario), "lifecycle"):
                    return code
        return 0


@dataclass
class MutantResult:
    mutant: Mutant
    outcome: str  # killed / survived / known-survivor / equivalent / invalid
    detail: str
    seconds: float


def run_mutant(mutant: Mutant, baseline: Path, paths: list[Path], timeout: float) -> MutantResult:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.id}-") as tmp:
        package = Path(tmp) / PACKAGE
        shutil.copytree(REPO_ROOT / PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
        try:
            if mutant is not CONTROL:
                mutant.apply(package)
        except ValueError as error:
            return MutantResult(mutant, "invalid", str(error), 0.0)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([tmp, str(REPO_ROOT)]), "PYTHONDONTWRITEBYTECODE": "1"}
        command = [
            sys.executable,
            "-m",
            "harness.cli",
            "mutation",
            "--check",
            str(baseline),
            "--package",
            str(package),
            *map(str, paths),
        ]
        try:
            if mutant.tests and (verdict := run_tests(mutant, tmp, env, timeout)):
                return MutantResult(mutant, *verdict, time.perf_counter() - started)
            done = subprocess.run(
                command, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )  # cwd: `python -m` puts it first on sys.path, before the unmutated checkout
        except subprocess.TimeoutExpired:
            return MutantResult(mutant, "killed", f"the corpus did not finish within {timeout:g} s", timeout)
    seconds = time.perf_counter() - started
    if done.returncode == 0:
        if mutant.equivalent:
            return MutantResult(mutant, "equivalent", mutant.equivalent, seconds)
        if mutant.known_survivor:
            return MutantResult(mutant, "known-survivor", mutant.known_survivor, seconds)
        return MutantResult(mutant, "survived", "no case changed its verdict", seconds)
    if mutant.equivalent or mutant.known_survivor:
        note = "equivalent" if mutant.equivalent else "known_survivor"
        return MutantResult(mutant, "invalid", f"listed as {note} but a case kills it: remove the note", seconds)
    if done.returncode == 1:
        return MutantResult(mutant, "killed", done.stdout.strip().splitlines()[-1], seconds)
    if done.returncode == 3:
        return MutantResult(mutant, "invalid", done.stderr.strip(), seconds)
    last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
    return MutantResult(mutant, "killed", f"the port crashed: {last}", seconds)


def run_tests(mutant: Mutant, tmp: str, env: dict[str, str], timeout: float) -> tuple[str, str] | None:
    """The mutant's own unit tests against the mutated copy: (outcome, detail) when they kill it (or cannot run),
    None when they pass. Run from the copy's parent, which `python -m pytest` puts first on sys.path."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        f"--rootdir={REPO_ROOT}",
        *(str(REPO_ROOT / test) for test in mutant.tests),
    ]
    done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode == 0:
        return None
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    if done.returncode != 1:  # 2-5: interrupted, internal or usage error, no test collected
        return "invalid", f"its tests could not run (pytest exit {done.returncode}: {last})"
    if mutant.equivalent or mutant.known_survivor:
        return "invalid", "listed as equivalent or known_survivor but its tests kill it: remove the note"
    failed = next((line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")), last)
    path, sep, name = failed.partition("::")  # pytest prints the path from its cwd, the copy's parent
    failed = path[max(path.rfind("tests/"), 0) :] + sep + name
    return "killed", f"{failed} failed [unit tests]"


def result_line(result: MutantResult) -> str:
    """A mutant's result as the tool prints it, once, when the mutant is done."""
    return f"{result.outcome:<14} {result.mutant.id} ({result.seconds:.0f} s): {result.detail}"


def summary(results: list[MutantResult]) -> tuple[str, bool]:
    """The closing score line (each result has had its own line, `result_line`), and whether the session passes."""
    kinds = ("killed", "survived", "known-survivor", "equivalent", "invalid")
    counts = {k: sum(1 for r in results if r.outcome == k) for k in kinds}
    scored = counts["killed"] + counts["survived"] + counts["known-survivor"]
    score = f"{counts['killed']}/{scored} killed" + (f" ({100 * counts['killed'] / scored:.0f}%)" if scored else "")
    line = (
        f"mutation score: {score}; {counts['equivalent']} equivalent (explained, not scored), "
        f"{counts['known-survivor']} known survivors (explained), {counts['survived']} survived, "
        f"{counts['invalid']} invalid"
    )
    return line, counts["survived"] == 0 and counts["invalid"] == 0
