"""Lifecycle replays judged per step: differences, recorded observations, runners that cannot probe."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cases.load import load_scenario
from harness.core.model import CompileRequest, Outcome, ScenarioError, Status
from harness.repo.gitenv import isolated_env
from harness.run.lifecycle import observe, replay
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.python_port import PythonPortRunner
from harness.verdict.diff import observation_diffs
from harness.verdict.judge import judge_lifecycle
from letta_profiles import resolve_profile_name
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


def recorded_case(tmp_path: Path, written: str, base: str = "raw-system-edit", value: bool = False) -> Path:
    """`base` with one `recorded` entry for `written` (a flow list on the file's last line but two)."""
    observed = f'{{turn 2: {{"system_has:preset": {str(value).lower()}}}}}'
    entry = f"recorded:\n  - for: [{written!r}]\n    source: s\n    observations: {observed}\n"
    text = (CASES / f"{base}.yaml").read_text(encoding="utf-8").split("recorded:\n")[0] + entry
    path = tmp_path / "lifecycle" / f"{base}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("0.34.12", "pypi:0.34.12"),
        ("pypi:0.34.12", "pypi:0.34.12"),
        ("letta-code@0.34.12", "pypi:0.34.12"),
        ("0.32.18", "0.32.18"),
        ("npm:0.32.18", "0.32.18"),
        ("pypi:0.32.18", "pypi:0.32.18"),
    ],
)
def test_recorded_for_names_a_reference_as_reference_does_and_matches_its_results(
    tmp_path: Path, written: str, label: str
) -> None:
    """`for: ["0.34.12"]` is the reference `--reference 0.34.12` runs, whose results are labelled `pypi:0.34.12`."""
    scenario = load_scenario(recorded_case(tmp_path, written))
    assert scenario.recorded[0].targets == (label,) and label in scenario.recorded_targets()


def test_observations_recorded_for_a_bare_version_are_checked_on_its_results(tmp_path):
    """Before, `for: ["0.34.12"]` never matched `pypi:0.34.12`: no check, and "records no observations"."""
    scenario = load_scenario(recorded_case(tmp_path, "0.34.12", value=False))  # the prompt has it: recorded wrong
    side = python_side("letta-code@0.33.6", tmp_path)
    result = replay(scenario, side, python_side("letta-code@0.33.6", tmp_path), "python", tmp_path / "w", tmp_path)
    status, reasons = judge_lifecycle(scenario, "pypi:0.34.12", "letta-code@0.33.6", result)
    assert status == Status.FAIL and "turn 2 system_has:preset is True, recorded False (s)" in reasons
    assert not any("records no observations" in reason for reason in reasons)


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("0.34.21", "'0.34.21' is not a pinned release; did you mean 0.34.12? (pinned: npm:0.25.3,"),  # a typo
        ("pypi:0.32.17", "`conformance pin pypi:0.32.17`"),  # 0.32.17 is pinned on npm only
        ("spec-v2", "'spec-v2' is not a pinned release"),  # a profile: only a golden case records for one
        ("letta-server@0.16.8", "--impl letta-server:0.16.8; what it does differently goes in its expectations file"),
        ("*", "'*' names no one reference"),
        ("golden", "'golden' names no one reference"),
        (
            "npm:0.32.18@node",
            "baseline runtime only (docs/matrix.md), so these observations would never be checked; write '0.32.18'",
        ),
    ],
)
def test_recorded_for_naming_no_reference_the_case_runs_on_is_refused_at_its_line(
    tmp_path: Path, written: str, says: str
) -> None:
    """Its observations would never be checked, and every run would say the case records none for the release."""
    path = recorded_case(tmp_path, written)
    line = path.read_text(encoding="utf-8").count("\n") - 2
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.line == line and str(info.value).startswith(f"{path}:{line}: recorded/0/for: ")
    assert says in str(info.value), str(info.value)


@pytest.mark.parametrize(
    ("golden", "written", "says"),
    [
        ("spec-v2", "spec-v2", None),
        ("letta-code@0.32.18", "0.32.18", None),  # --profile's spellings of one profile
        ("spec-v2", "0.32.18", "a golden case runs the Python port on its profile 'spec-v2' alone"),
        ("spec-v2", "spek-v2", "write for: [spec-v2]"),
    ],
)
def test_recorded_for_in_a_golden_case_names_its_profile_as_profile_does(
    tmp_path: Path, golden: str, written: str, says: str | None
) -> None:
    path = recorded_case(tmp_path, written, base="spec-table-golden")
    path.write_text(path.read_text(encoding="utf-8").replace("profile: spec-v2", f"profile: {golden}"), "utf-8")
    if says is None:
        scenario = load_scenario(path)
        assert scenario.recorded_targets() == {resolve_profile_name(golden)}  # what the engine judges it as
        return
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:{info.value.line}: recorded/0/for: ") and says in str(info.value)


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
    from harness.core.reference import ReferenceSpec

    scenarios = [s for s in load_scenarios([CASES]).scenarios if s.golden is None]
    with Session([ReferenceSpec("npm", release)], timeout=120) as session:
        results = session.run(scenarios)
    assert len(results) == len(scenarios) >= 12
    excluded = {s.id for s in scenarios if s.profiles and f"letta-code@{release}" not in s.profiles}
    assert {r.case_id for r in results if r.status == Status.NOT_APPLICABLE} == excluded
    assert [
        (r.case_id, r.status, r.reasons) for r in results if r.status not in (Status.PASS, Status.NOT_APPLICABLE)
    ] == []
