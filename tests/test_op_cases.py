"""Op cases (cases/ops/, harness.run.op_case): the loader's refusals name the line and the fix, an answer is
compared as a record with the copy's path marked, and `repoAfter` shows what a writing op left behind."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cases.load import load_scenario
from harness.core import protocol
from harness.core.model import Outcome, Scenario, ScenarioError
from harness.core.reference import ReferenceSpec
from harness.repo.after import repository_after
from harness.repo.gitenv import isolated_env
from harness.run.by_reference import run_by_reference
from harness.run.op_case import MEMORY_DIR_MARK, as_op_record
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.implementations import DEFAULT
from harness.tools.releases.drift import changes

REPO = {"commits": [{"files": {"system/a.md": "---\ndescription: a\n---\nA\n"}}]}


@pytest.fixture
def probe_op(monkeypatch: pytest.MonkeyPatch) -> str:
    """An op row that op cases may send (the real ones are added with their drivers)."""
    monkeypatch.setitem(
        protocol.OPS, "probe_write", protocol.Op("probe_write", record=("said",), case=True, compares_repo=True)
    )
    return "probe_write"


def write_case(directory: Path, folder: str, **fields: object) -> Path:
    path = directory / folder / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"id": "c", "description": "d", "repo": REPO, **fields}, sort_keys=False))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.line is not None, "every refusal names its line"
    return str(info.value)


def test_an_op_case_is_the_kind_of_its_folder_and_keeps_its_op_and_args(tmp_path: Path, probe_op: str) -> None:
    scenario = load_scenario(write_case(tmp_path, "ops", op=probe_op, args={"path": "projects"}))
    assert (scenario.kind, scenario.op, scenario.args) == ("op", probe_op, {"path": "projects"})


def test_an_op_case_names_an_op_cases_can_send(tmp_path: Path, probe_op: str) -> None:
    message = refusal(write_case(tmp_path, "ops", op="compile"))
    assert "op: 'compile' is not an op a case can send" in message and probe_op in message
    assert "an op case needs `op`" in refusal(write_case(tmp_path, "ops"))


def test_the_harness_sets_the_memory_directory_and_profile_not_the_case(tmp_path: Path, probe_op: str) -> None:
    message = refusal(write_case(tmp_path, "ops", op=probe_op, args={"memoryDir": "/elsewhere"}))
    assert "args: 'memoryDir' is set by the harness" in message


def test_op_fields_belong_to_op_cases_and_steps_to_lifecycle_probes(tmp_path: Path, probe_op: str) -> None:
    assert "move the file to cases/ops/" in refusal(write_case(tmp_path, "compile", op=probe_op))
    assert "move the file to cases/lifecycle/" in refusal(
        write_case(tmp_path, "ops", op=probe_op, steps=[{"turn": "x"}])
    )


def test_a_thrown_answer_is_compared_as_text_and_the_copys_path_is_marked(tmp_path: Path) -> None:
    copy = tmp_path / "op-1" / "memory"
    thrown = as_op_record(Outcome("thrown", thrown=f"ENOENT: {copy}/system/x.md"), copy)
    assert (thrown.status, thrown.record) == ("ok", {"thrown": f"ENOENT: {MEMORY_DIR_MARK}/system/x.md"})
    nested = as_op_record(Outcome("ok", record={"said": [f"{copy}/a", {"in": str(copy)}]}), copy)
    assert nested.record == {"said": [f"{MEMORY_DIR_MARK}/a", {"in": MEMORY_DIR_MARK}]}
    assert as_op_record(Outcome("unsupported", error="no such op"), copy).status == "unsupported"


def test_a_writing_op_compares_the_repository_after_it(probe_op: str) -> None:
    assert protocol.OPS[probe_op].case_fields == ("said", "thrown", "repoAfter")


def test_the_repository_after_shows_head_tree_index_and_files_but_no_commit_id(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    repo = tmp_path / "memory"
    (repo / "system").mkdir(parents=True)
    (repo / "system" / "a.md").write_text("one\n")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
    (repo / "system" / "a.md").write_text("two\n")
    (repo / "notes.md").write_bytes(b"\xff" * 10)
    after = repository_after(repo, env)
    commit = after["head"]["commit"]
    assert after["head"]["ref"] == "refs/heads/main"
    assert commit["message"] == "first\n" and commit["parents"] == [] and commit["author"].endswith("+0000")
    assert (
        len(after["tree"]) == 1
        and after["tree"][0].startswith("100644 blob ")
        and after["tree"][0].endswith("\tsystem/a.md")
    )
    assert after["index"][0].endswith(" 0\tsystem/a.md")
    assert after["files"]["system/a.md"] == "two\n"  # the work tree, not HEAD
    assert after["files"]["notes.md"]["bytes"] == 10  # not UTF-8: its size and digest
    assert ".git" not in "".join(after["files"])
    assert repository_after(tmp_path / "gone", env) == {"missing": True}


class Writer(Runner):
    """A fabricated side of the probe op: writes `system/new.md` into the copy it is asked about and says where
    (or, as a release without the op, answers unsupported)."""

    def __init__(self, name: str, text: str | None) -> None:
        self.name, self.text = name, text

    def ask(self, request: dict[str, Any]) -> Outcome:
        if self.text is None:
            return Outcome("unsupported", error=f"{self.name} has no probe_write (src/probe.ts)")
        target = Path(request["memoryDir"]) / "system" / "new.md"
        target.write_text(self.text)
        return Outcome("ok", record={"said": f"wrote {target}"})


def op_results(tmp_path: Path, scenario: Scenario, impl_text: str, by_reference: bool) -> list[tuple[str, str, str]]:
    made = {"0.34.6": Writer("0.34.6", None), "0.34.12": Writer("0.34.12", "x\n")}
    with Session(
        [ReferenceSpec.parse(f"npm:{v}") for v in made],
        cache=tmp_path / "cache",
        jobs=1,
        memoize=False,
        implementations=[DEFAULT],
        runner_factory=lambda spec, cache: made[spec.value],
        impl_factory=lambda spec, profile, context: Writer("impl", impl_text),
    ) as session:
        results = run_by_reference(session, [scenario]) if by_reference else session.run([scenario])
    return [(r.reference, r.status.value, " ".join(r.reasons) + " ".join(d.field for d in r.diffs)) for r in results]


@pytest.mark.parametrize("by_reference", [False, True], ids=["case by case", "reference by reference"])
def test_an_op_case_compares_the_answer_and_the_repository_after_and_is_not_applicable_without_the_op(
    tmp_path: Path, probe_op: str, by_reference: bool
) -> None:
    scenario = load_scenario(write_case(tmp_path, "ops", op=probe_op))
    agreeing = op_results(tmp_path, scenario, "x\n", by_reference)
    assert agreeing[0][:2] == ("0.34.6", "not-applicable") and "has no probe_write (src/probe.ts)" in agreeing[0][2]
    assert agreeing[1][:2] == ("0.34.12", "pass")  # the answers name different copies, both written <memoryDir>
    differing = op_results(tmp_path, scenario, "y\n", by_reference)
    assert differing[1][:2] == ("0.34.12", "fail") and differing[1][2].endswith("repoAfter")


def test_the_drift_report_names_the_release_where_an_op_appears() -> None:
    without = Outcome("unsupported", error="letta-code 0.34.6 has no Memory tool view")
    answered = Outcome("ok", record={"said": "x"})
    assert changes(without, answered, ("said", "thrown")) == ["op (appears)"]
    assert changes(answered, without, ("said", "thrown")) == ["op (disappears)"]
    assert changes(without, without) == []
    assert changes(answered, Outcome("ok", record={"said": "y"}), ("said", "thrown")) == ["said"]
    threw = Outcome("ok", record={"thrown": "Error: a"})  # an op case's thrown message is a record field
    assert changes(threw, Outcome("ok", record={"thrown": "Error: b"}), ("said", "thrown")) == ["thrown"]
    assert changes(answered, threw, ("said", "thrown")) == ["said (removed)", "thrown (now throws)"]
