"""Lifecycle replays judged per step: differences, recorded observations, runners that cannot probe."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cases.load import load_scenario
from harness.engine import Session
from harness.lifecycle import observe, replay
from harness.model import CompileRequest, Outcome, Status
from harness.repo.gitenv import isolated_env
from harness.runners.base import Runner
from harness.runners.python_port import PythonPortRunner
from harness.verdict.diff import observation_diffs
from harness.verdict.judge import judge_lifecycle
from memfs_prompt import resolve_profile

CASES = Path(__file__).resolve().parent.parent / "cases" / "lifecycle"


def python_side(profile: str, cache: Path) -> PythonPortRunner:
    return PythonPortRunner(resolve_profile(profile), isolated_env(cache / "home", cache / "repos"))


def run(case: str, reference: Runner, python: Runner, cache: Path, label: str = "0.32.18"):
    scenario = load_scenario(CASES / f"{case}.yaml")
    result = replay(scenario, reference, python, "python", cache / "work", cache)
    return scenario, result, judge_lifecycle(scenario, label, "letta-code@0.32.18", result)


def test_a_port_with_other_branches_fails_at_the_turn_that_differs(tmp_path):
    reference = python_side("letta-code@0.32.18", tmp_path)
    port = python_side("letta-code@0.30.28", tmp_path)  # recompiles where 0.32.18 sends an update
    _, result, (status, reasons) = run("probe-spec-chapter9", reference, port, tmp_path)
    assert status == Status.FAIL
    by_step = {row.label: {d["observation"] for d in row.diffs} for row in result.rows}
    assert by_step["turn 1"] == set()
    assert {"system_sha256", "mid_sha256", "system_has:fact", "mid_has:fact", "sent_roles"} <= by_step["turn 2"]
    assert any(d.field == "turn 2: executed.systemPrompt" and d.offset for d in result.text_diffs)
    assert any(reason.startswith("python differs at turn 2") for reason in reasons)


def test_identical_sides_pass_and_recorded_observations_are_checked(tmp_path):
    reference, port = python_side("letta-code@0.32.18", tmp_path), python_side("letta-code@0.32.18", tmp_path)
    _, _, (status, reasons) = run("probe-spec-chapter9", reference, port, tmp_path)
    assert (status, reasons) == (Status.PASS, [])
    # The same behaviour judged as 0.30.28, whose recorded table says the prompt is recompiled.
    _, _, (status, reasons) = run("probe-spec-chapter9", reference, port, tmp_path, label="0.30.28")
    assert status == Status.FAIL
    assert any("turn 2 system_has:fact is False, recorded True" in r for r in reasons)


class CompileOnly(Runner):
    name = "compile-only"

    def compile(self, request: CompileRequest) -> Outcome:
        return Outcome("ok", record={})


def test_a_reference_without_lifecycle_support_is_an_error_never_a_pass(tmp_path):
    _, _, (status, reasons) = run(
        "raw-system-edit", CompileOnly(), python_side("letta-code@0.32.18", tmp_path), tmp_path
    )
    assert status == Status.ERROR
    assert "cannot run lifecycle probes" in reasons[0]


class CrashesAtTurnTwo(PythonPortRunner):
    def lifecycle_step(self, step):
        if step["kind"] == "turn" and step["text"] != "hello":
            return Outcome("error", error="process exited", stderr="Segmentation fault")
        return super().lifecycle_step(step)


def test_a_reference_crash_mid_replay_is_an_error_with_its_stderr(tmp_path):
    reference = CrashesAtTurnTwo(
        resolve_profile("letta-code@0.32.18"), isolated_env(tmp_path / "home", tmp_path / "repos")
    )
    _, result, (status, reasons) = run(
        "probe-spec-chapter9", reference, python_side("letta-code@0.32.18", tmp_path), tmp_path
    )
    assert status == Status.ERROR
    assert "could not run turn 2" in reasons[0]
    assert result.stderr == "Segmentation fault"


class RefusesItsDirectory(PythonPortRunner):
    def lifecycle_open(self, request):
        return Outcome("error", error=f"cannot open {request.memory_dir}", stderr=f"ENOENT {request.storage_dir}")


def test_a_replay_error_reads_the_same_on_every_run(tmp_path):
    """Errors name the replay's working copy as <work>, never its random temporary directory."""
    reference = RefusesItsDirectory(
        resolve_profile("letta-code@0.32.18"), isolated_env(tmp_path / "home", tmp_path / "repos")
    )
    errors = []
    for _ in range(2):
        _, result, (status, _) = run(
            "raw-system-edit", reference, python_side("letta-code@0.32.18", tmp_path), tmp_path
        )
        assert status == Status.ERROR
        errors.append((result.error, result.stderr))
    assert (
        errors[0]
        == errors[1]
        == ("reference could not run open: cannot open <work>/copy-0/memory", "ENOENT <work>/storage-reference")
    )


class CommitsInItsMemory(PythonPortRunner):
    """A side that writes a commit into the memory directory it was opened on before its second turn, as
    upstream's ensureLocalMemoryRepo does where HEAD names no commit."""

    def lifecycle_open(self, request):
        self.memory = request.memory_dir
        return super().lifecycle_open(request)

    def lifecycle_step(self, step):
        if step["kind"] == "turn" and step["text"] != "hello":
            who = ["-c", "user.name=side", "-c", "user.email=side@x.invalid"]
            git = ["git", *who, "commit", "--allow-empty", "-qm", "x"]
            subprocess.run(git, cwd=self.memory, env=self.git_env, check=True, capture_output=True)
        return super().lifecycle_step(step)


def test_each_side_reads_its_own_checkout_so_what_one_writes_the_other_does_not_read(tmp_path):
    reference = CommitsInItsMemory(resolve_profile("letta-code@0.32.18"), isolated_env(tmp_path / "h", tmp_path))
    port = python_side("letta-code@0.32.18", tmp_path)
    _, result, (status, _) = run("probe-spec-chapter9", reference, port, tmp_path)
    assert status == Status.FAIL  # with one shared checkout, the port would have read the reference's commit
    by_step = {row.label: {d["observation"] for d in row.diffs} for row in result.rows}
    assert by_step["commit"] == set()  # the harness's own commit is the same on both sides
    assert "cache_memfs_revision" in by_step["turn 2"]


def test_golden_case_without_a_recorded_entry_for_its_profile_is_an_error(tmp_path):
    scenario = load_scenario(CASES / "spec-table-golden.yaml")
    scenario = replace(scenario, recorded=(replace(scenario.recorded[0], targets=("letta-code@0.32.18",)),))
    result = replay(scenario, None, python_side("spec-v2", tmp_path), "python", tmp_path / "w", tmp_path)
    status, reasons = judge_lifecycle(scenario, "golden", "spec-v2", result)
    assert status == Status.ERROR and "records nothing for spec-v2" in reasons[0]


def test_observations_count_update_blocks_and_roles_sent_to_the_model():
    record = {
        "executed": {
            "systemPrompt": "S",
            "midConversationSystemPrompt": "<memory_update>\nteal\n</memory_update>",
            "uiMessages": [{"role": "user", "text": "hi"}],
            "historyCount": 1,
            "model": "m",
        },
        "stored": [{"role": "user", "text": "hi"}],
        "compiled": {"content": "S", "memfsRevision": "r"},
    }
    obs = observe(record, {"fact": "teal"}, previous_system="S")
    assert obs["sent_roles"] == ["user", "system"]
    assert (obs["memory_update_blocks"], obs["stored_memory_update_blocks"]) == (1, 0)
    assert (obs["mid_has:fact"], obs["stored_has:fact"], obs["system_changed"]) == (True, False, False)
    (only_python,) = observation_diffs({"a": 1}, {"a": 1, "b": 2})
    assert (only_python["observation"], only_python["reference"], only_python["impl"]) == ("b", "<absent>", 2)
    (roles,) = observation_diffs({"sent_roles": ["user", "system"]}, {"sent_roles": ["user"]})
    assert roles["deepdiff"] == {"iterable_item_removed": {"root[1]": "system"}}


@pytest.mark.integration
@pytest.mark.parametrize("release", ["0.30.28"])
def test_lifecycle_corpus_agrees_with_an_update_gated_release(release, reference_bun, release_bundle):
    """`pytest cases` runs the corpus on the default release; this one runs it on 0.30.28 as well."""
    release_bundle(release)
    from harness.cases.load import load_scenarios
    from harness.runners.manifest import ReferenceSpec

    scenarios = [s for s in load_scenarios([CASES]).scenarios if s.golden is None]
    with Session([ReferenceSpec("npm", release)], timeout=120) as session:
        results = session.run(scenarios)
    assert len(results) == len(scenarios) >= 12
    assert [(r.case_id, r.status, r.reasons) for r in results if r.status != Status.PASS] == []
