"""`client_skills` through the harness: the scenario schema, the request, the port's answer, the one diff;
and the lifecycle steps that carry skills or open an agent-free conversation (0.33.6+)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.load import load_scenario, load_text
from harness.cases.write import case_document
from harness.core.fields import SKILLS_FIELD
from harness.core.model import ClientSkills, CompileRequest, Outcome, ScenarioError, Status
from harness.core.repomodel import RepoModel
from harness.repo.build import materialize_repo
from harness.repo.gitenv import isolated_env
from harness.run.lifecycle import replay, wire_steps
from harness.run.session import build_request
from harness.runners.python_port import PythonPortRunner
from harness.verdict.diff import BOTH, outcome_diff, presence
from harness.verdict.judge import judge_lifecycle
from harness.verdict.signature import signature_of
from memfs_prompt import profile_for_release, resolve_profile
from memfs_prompt.conversation import LocalConversations
from memfs_prompt.render_v1 import UpstreamError

CASES = Path(__file__).resolve().parent.parent / "cases"
REPO = 'repo:\n  commits:\n    - files:\n        system/a.md: "x"\n'


def compile_case(tmp_path: Path, inputs: str = "") -> Path:
    path = tmp_path / "compile" / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: c\ndescription: d\n{inputs}{REPO}", encoding="utf-8")
    return path


# --- the scenario -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("[]", []),
        ("null", None),
        ("{name: x}", {"name": "x"}),
        ("[{name: a, description: b}, 3]", [{"name": "a", "description": "b"}, 3]),
    ],
)
def test_the_schema_takes_any_client_skills_value_and_keeps_it_apart_from_absent(tmp_path, written, value) -> None:
    scenario = load_scenario(compile_case(tmp_path, f"inputs:\n  client_skills: {written}\n"))
    assert scenario.client_skills == ClientSkills(value)
    assert load_scenario(compile_case(tmp_path)).client_skills is None  # absent is not []


def test_a_lifecycle_case_refuses_client_skills_as_a_compile_input(tmp_path) -> None:
    text = f"id: l\ndescription: d\ninputs:\n  client_skills: []\n{REPO}steps:\n  - turn: hi\n"
    with pytest.raises(ScenarioError, match=r"client_skills.*turn steps") as info:
        load_text(text, tmp_path / "lifecycle" / "l.yaml", "lifecycle")
    assert info.value.line == 4


def test_turn_steps_take_client_skills_and_agent_free_conversations_take_system_and_model(tmp_path) -> None:
    steps = (
        "steps:\n  - turn: hi\n    client_skills: [{name: a}]\n"
        "  - agent_free_conversation: {system: 'S {CORE_MEMORY}', model: m/x}\n  - turn: again\n"
    )
    scenario = load_text(f"id: l\ndescription: d\n{REPO}{steps}", tmp_path / "lifecycle" / "l.yaml", "lifecycle")
    now = scenario.inputs["now"]
    assert wire_steps(scenario) == [
        {"kind": "turn", "now": now, "text": "hi", "clientSkills": [{"name": "a"}]},
        {"kind": "agent_free_conversation", "now": now, "system": "S {CORE_MEMORY}", "model": "m/x"},
        {"kind": "turn", "now": now, "text": "again"},  # no skills given: none sent
    ]
    bad = f"id: l\ndescription: d\n{REPO}steps:\n  - agent_free_conversation: {{model: m}}\n"
    missing = r"steps/0/agent_free_conversation: 'system' is a required property \(add it\)"
    with pytest.raises(ScenarioError, match=missing):
        load_text(bad, tmp_path / "lifecycle" / "l.yaml", "lifecycle")


def test_a_divergence_may_name_the_prompt_with_skills(tmp_path) -> None:
    divergence = (
        "divergences:\n  - {references: ['*'], fields: [systemPromptWithSkills], kind: upstream-bug, reason: r}\n"
    )
    assert load_scenario(compile_case(tmp_path, divergence)).divergences[0].fields == (SKILLS_FIELD,)


def test_written_cases_keep_a_null_or_empty_client_skills() -> None:
    for value in (None, []):
        doc = case_document("w", "d", RepoModel(), inputs={"client_skills": value, "system": "{CORE_MEMORY}"})
        assert doc["inputs"]["client_skills"] == value


# --- the request and the answers --------------------------------------------------------------------


def test_the_request_carries_client_skills_and_sends_them_only_when_given(tmp_path) -> None:
    scenario = load_scenario(compile_case(tmp_path, "inputs:\n  client_skills: []\n"))
    repo = materialize_repo(scenario, tmp_path / "cache")
    request = build_request(scenario, repo)
    assert request.client_skills == ClientSkills([])
    assert request.to_wire()["clientSkills"] == []
    assert "clientSkills" not in CompileRequest(tmp_path, "s", "a", "c", "2026-01-02T03:04:05.678Z").to_wire()


def test_the_port_answers_the_prompt_with_skills_only_when_asked(tmp_path) -> None:
    scenario = load_scenario(compile_case(tmp_path, "inputs:\n  client_skills: [{name: build, description: B}]\n"))
    request = build_request(scenario, materialize_repo(scenario, tmp_path / "cache"))
    port = PythonPortRunner(resolve_profile("letta-code@0.34.12"), isolated_env(tmp_path / "h", tmp_path / "cache"))
    record = port.compile(request).record or {}
    assert record[SKILLS_FIELD].startswith(record["content"].rstrip())
    assert record[SKILLS_FIELD].endswith("- `build`: B\n</available_skills>")
    plain = port.compile(CompileRequest(**{**request.__dict__, "client_skills": None})).record or {}
    assert SKILLS_FIELD not in plain


RECORD = {"content": "c", "coreMemory": "m", "compiledAt": "t", "rawSystemHash": "h", "memfsRevision": "r"}


def test_the_one_diff_compares_the_prompt_with_skills_when_either_side_has_it() -> None:
    plain = Outcome("ok", record=RECORD)
    same = Outcome("ok", record={**RECORD, SKILLS_FIELD: "c\n\n<available_skills>"})
    other = Outcome("ok", record={**RECORD, SKILLS_FIELD: "c\n\n<available_skills>!"})
    assert outcome_diff(plain, plain) == [] and SKILLS_FIELD not in presence(plain, plain)
    assert outcome_diff(same, same) == [] and presence(same, same)[SKILLS_FIELD] == BOTH
    [diff] = outcome_diff(same, other)
    assert (diff.field, diff.offset) == (SKILLS_FIELD, len("c\n\n<available_skills>"))
    [missing] = outcome_diff(same, plain)
    assert (missing.field, missing.impl_present) == (SKILLS_FIELD, False)
    signature = signature_of("0.34.12", same, other)
    assert signature is not None and [name for name, _ in signature.diffs] == [SKILLS_FIELD]


# --- lifecycle --------------------------------------------------------------------------------------


def test_profiles_split_at_agent_free_conversations() -> None:
    assert profile_for_release("0.33.5").name == "letta-code@0.33.3"
    assert profile_for_release("0.33.6").name == profile_for_release("0.34.0").name == "letta-code@0.33.6"
    assert profile_for_release("0.34.1").name == profile_for_release("0.34.6").name == "letta-code@0.34.1"
    assert profile_for_release("0.34.1").agent_free_conversations
    assert profile_for_release("0.34.7").name == profile_for_release("0.34.12").name == "letta-code@0.34.7"
    assert not profile_for_release("0.33.5").agent_free_conversations
    assert profile_for_release("0.33.6").agent_free_conversations and profile_for_release("0.33.6").memfs_v2


def test_the_port_refuses_agent_free_conversations_before_0_33_6(tmp_path) -> None:
    agent = LocalConversations(
        tmp_path, agent_id="a", system="s", profile=resolve_profile("letta-code@0.33.3"), clock=lambda: None
    )  # type: ignore[arg-type]
    with pytest.raises(UpstreamError, match="createEphemeralConversation"):
        agent.create_agent_free_conversation("local-conv-x", system="s", model="m")


@pytest.mark.parametrize("profile", ["letta-code@0.33.3", "letta-code@0.33.6"])
def test_agent_free_probe_replays_with_the_reference_choosing_the_id(tmp_path, profile) -> None:
    """Python port on both sides: the python side takes the conversation id the reference chose."""
    env = isolated_env(tmp_path / "home", tmp_path / "repos")
    scenario = load_scenario(CASES / "lifecycle" / "agent-free-conversation.yaml")
    reference = PythonPortRunner(resolve_profile(profile), env)
    reference_step = reference.lifecycle_step
    reference.lifecycle_step = lambda step: reference_step(_chosen(step))  # type: ignore[method-assign]
    python = PythonPortRunner(resolve_profile(profile), env)
    result = replay(scenario, reference, python, "python", tmp_path / "work", tmp_path)
    status, reasons = judge_lifecycle(scenario, "x", resolve_profile(profile).name, result)
    assert result.error is None and status == Status.PASS, reasons
    rows = {row.label: row for row in result.rows}
    if profile == "letta-code@0.33.6":
        assert rows["turn 2"].impl["conversation_id"] == "local-conv-chosen"
        assert rows["turn 2"].impl["system_has:placeholder"] and rows["turn 2"].impl["system_has:skills"]
        assert rows["turn 3"].impl["memory_update_blocks"] == 0
    else:
        assert rows["agent free conversation"].impl == {"thrown": True}
        assert rows["turn 3"].impl["memory_update_blocks"] == 1


def _chosen(step: dict) -> dict:
    """The reference picks an agent-free conversation's id itself (upstream: `local-conv-<randomUUID()>`)."""
    return {**step, "conversationId": "local-conv-chosen"} if step["kind"] == "agent_free_conversation" else step
