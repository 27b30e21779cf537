"""Lifecycle probes: replaying a conversation's steps on two implementations, turn by turn.

A lifecycle scenario (cases/lifecycle/*.yaml) starts from a repository and a list of steps:
user turns, memory commits, raw system prompt edits, model changes, new conversations and
explicit recompiles. Each reference replays them on upstream's real turn loop (a recording
executor captures what the model would receive), the implementation under test on its own (the
Python port on `memfs_prompt.conversation`); each side reads its own working copy of the repository
(upstream writes into it), in which the harness makes the same repository steps between turns
(commits, amends, resets, a broken HEAD: harness.repo.checkout).

Every step yields observations (`observe`): hashes of the system prompt and of the cached record,
whether each of the case's facts is in the system prompt, in the mid-conversation text, in what
is sent and in what is stored, how many `<memory_update>` blocks are sent, and the roles of the
messages. They are compared per step and per observation; texts that differ are byte-diffed.
A case may also record what real builds were measured to do (`recorded`); a reference that no
longer does so fails, and a `golden` case checks the Python port against expectations quoted
from the spec.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.model import FieldDiff, LifecycleOpen, Outcome, Replay, Scenario, StepRow
from harness.repo.build import materialize_repo
from harness.repo.checkout import REPOSITORY_STEPS, Checkout
from harness.repo.gitenv import isolated_env
from harness.runners.base import Runner
from harness.verdict.diff import observation_diffs
from harness.verdict.text import as_bytes, first_diff_offset

MEMORY_UPDATE_TAG = "<memory_update>"
# Texts compared byte for byte when their hash observation differs: (observation, record path).
TEXTS = (
    ("system_sha256", ("executed", "systemPrompt")),
    ("mid_sha256", ("executed", "midConversationSystemPrompt")),
    ("cache_content_sha256", ("compiled", "content")),
    ("cache_core_memory_sha256", ("compiled", "coreMemory")),
)


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _texts(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m.get("text", "") for m in messages)


def observe(record: dict[str, Any], facts: dict[str, str], previous_system: str | None) -> dict[str, Any]:
    """The observations of one step's record (the same function for every implementation)."""
    obs: dict[str, Any] = {}
    executed = record.get("executed")
    if executed is not None:
        system = executed.get("systemPrompt") or ""
        mid = executed.get("midConversationSystemPrompt")
        ui = executed.get("uiMessages") or []
        sent = "\n".join([system, _texts(ui), mid or ""])
        obs["system_sha256"] = _sha(system)
        obs["system_changed"] = None if previous_system is None else system != previous_system
        obs["mid_sha256"] = _sha(mid)
        for name, fact in facts.items():
            obs[f"system_has:{name}"] = fact in system
            obs[f"mid_has:{name}"] = fact in (mid or "")
            obs[f"sent_has:{name}"] = fact in sent
        obs["memory_update_blocks"] = sent.count(MEMORY_UPDATE_TAG)
        obs["ui_messages"] = len(ui)
        obs["sent_roles"] = [m.get("role") for m in ui] + (["system"] if mid else [])
        obs["history_count"] = executed.get("historyCount")
        obs["model"] = executed.get("model")
    if "model" in record and executed is None:
        obs["model"] = record["model"]
    if "compacted" in record:
        obs["compacted_messages"] = [record["compacted"].get("before"), record["compacted"].get("after")]
    stored = record.get("stored") or []
    stored_text = _texts(stored)
    obs["conversation_id"] = record.get("conversationId")
    obs["stored_messages"] = len(stored)
    for name, fact in facts.items():
        obs[f"stored_has:{name}"] = fact in stored_text
    obs["stored_memory_update_blocks"] = stored_text.count(MEMORY_UPDATE_TAG)
    compiled = record.get("compiled") or {}
    obs["cache_memfs_revision"] = compiled.get("memfsRevision")
    obs["cache_compiled_at"] = compiled.get("compiledAt")
    obs["cache_raw_system_hash"] = (compiled.get("rawSystemHash") or "")[:16] or None
    obs["cache_content_sha256"] = _sha(compiled.get("content"))
    obs["cache_core_memory_sha256"] = _sha(compiled.get("coreMemory"))
    return obs


def _text_at(record: dict[str, Any], path: tuple[str, str]) -> Any:
    return (record.get(path[0]) or {}).get(path[1])


def _has_text(record: dict[str, Any], path: tuple[str, str]) -> bool:
    return path[1] in (record.get(path[0]) or {})


# The protocol key that carries each step's value (reference/driver.mjs, runners/python_port.py); the
# repository steps (harness.repo.checkout) are the harness's own and never sent.
STEP_VALUE = {"turn": "text", "system": "system", "model": "model", "conversation": "index"}


def wire_steps(scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's steps in the protocol's form, each carrying the pinned clock.

    A turn's `client_skills` travels as `clientSkills`, only when the step gives it; an
    `agent_free_conversation` step carries its `system` and `model`.
    """
    now = scenario.inputs["now"]
    steps = []
    for step in scenario.steps:
        kind = next(key for key in step if key != "client_skills")
        value = step[kind]
        if kind == "clock":
            now = value
            continue
        wire = {"kind": kind, "now": now}
        if kind in REPOSITORY_STEPS:
            wire[kind] = value
        elif kind in STEP_VALUE:  # new_conversation, recompile and compact carry no value
            wire[STEP_VALUE[kind]] = value
        elif kind == "agent_free_conversation":
            wire.update(value)
        if "client_skills" in step:
            wire["clientSkills"] = step["client_skills"]
        steps.append(wire)
    return steps


def _label(step: dict[str, Any], turn: int) -> str:
    return f"turn {turn}" if step["kind"] == "turn" else step["kind"].replace("_", " ")


def replay(
    scenario: Scenario,
    reference: Runner | None,
    impl: Runner,
    impl_label: str,
    work_root: Path,
    cache: Path,
    profile: str | None = None,
) -> Replay:
    """Run the steps on the reference (first, when there is one: a golden probe has none) and on the
    implementation under test, each over its own working copy."""
    sides: dict[str, Runner] = {"reference": reference} if reference is not None else {}
    sides["impl"] = impl
    materialized = materialize_repo(scenario, cache)
    work_root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="lifecycle-", dir=work_root))
    try:
        env = isolated_env(cache / "home", ceiling=cache / "repos")
        checkouts: dict[str, Checkout] = {}
        for number, side in enumerate(sides):  # paths of one length: a path's length can matter to git (PATH_MAX)
            copy = work / f"copy-{number}"
            shutil.copytree(materialized.root, copy, symlinks=True)
            checkouts[side] = Checkout(copy / "memory", scenario, env)
        memory = materialized.memory_dir.relative_to(materialized.root)
        try:
            result = _replay_in(scenario, sides, impl_label, work, checkouts, memory, profile)
        except Exception as error:  # the case is an error; the run goes on
            result = Replay([], [], error=f"could not replay: {type(error).__name__}: {error}")
        if result.error:  # the same text on every run: no temporary directory names
            result.error = result.error.replace(str(work), "<work>")
            result.stderr = result.stderr.replace(str(work), "<work>")
        return result
    finally:
        for runner in sides.values():
            runner.lifecycle_close()
        shutil.rmtree(work, ignore_errors=True)


def _replay_in(
    scenario: Scenario,
    sides: dict[str, Runner],
    impl_label: str,
    work: Path,
    checkouts: dict[str, Checkout],
    memory: Path,
    profile: str | None = None,
) -> Replay:
    facts: dict[str, str] = dict(scenario.facts)
    inputs = scenario.inputs
    request = LifecycleOpen(
        memory_dir=memory,  # per side, below
        storage_dir=work / "storage",  # per side, below
        system=inputs["system"],
        now=inputs["now"],
        model=scenario.model,
        delivery=scenario.delivery,
        profile=profile,
    )
    opened: dict[str, Any] = {}
    rows = [StepRow(0, "open")]
    for side, runner in sides.items():
        # each side its own store: two LocalBackends over one storage directory would see each other's agents
        memory_dir = checkouts[side].repo_dir.parent / memory
        own = replace(request, storage_dir=work / f"storage-{side}", memory_dir=memory_dir)
        outcome = runner.lifecycle_open(own if not opened else _with_ids(own, opened))
        if outcome.status != "ok":
            return _broken(side, impl_label, "open", outcome, rows)
        record = outcome.record or {}
        opened = opened or record.get("opened") or {}
        setattr(rows[0], side, observe(record, facts, None))
    previous: dict[str, str | None] = dict.fromkeys(sides)
    text_diffs: list[FieldDiff] = []
    thrown: list[str] = []
    turn = 0
    for index, step in enumerate(wire_steps(scenario), start=1):
        turn += step["kind"] == "turn"
        row = StepRow(index, _label(step, turn))
        rows.append(row)
        if step["kind"] in REPOSITORY_STEPS:  # the harness's own, the same in every side's checkout
            for side in sides:
                setattr(row, side, {"head": checkouts[side].run(step["kind"], step[step["kind"]])})
            if "reference" in sides:
                row.diffs = observation_diffs(row.reference, row.impl)
            continue
        records: dict[str, dict[str, Any]] = {}
        for side, runner in sides.items():
            outcome = runner.lifecycle_step(_with_chosen_id(step, records.get("reference")))
            if outcome.status in ("error", "unsupported"):
                return _broken(side, impl_label, row.label, outcome, rows)
            if outcome.status == "thrown":
                who = "reference" if side == "reference" else impl_label
                thrown.append(f"{who} threw at {row.label}: {outcome.thrown}")
                records[side] = {"thrown": outcome.thrown}
                setattr(row, side, {"thrown": True})
                continue
            records[side] = outcome.record or {}
            setattr(row, side, observe(records[side], facts, previous[side]))
            executed = records[side].get("executed")
            if executed is not None:
                previous[side] = executed.get("systemPrompt")
        if "reference" in records and "impl" in records:
            row.diffs = observation_diffs(row.reference, row.impl)
            text_diffs += _text_diffs(row, records["reference"], records["impl"])
    if "reference" in sides:
        rows[0].diffs = observation_diffs(rows[0].reference, rows[0].impl)
    return Replay(rows, text_diffs, thrown=thrown)


def _with_chosen_id(step: dict[str, Any], reference: dict[str, Any] | None) -> dict[str, Any]:
    """An agent-free conversation's id is `local-conv-<randomUUID()>`: the reference chooses it, the others take it."""
    chosen = ((reference or {}).get("agentFree") or {}).get("conversationId")
    return {**step, "conversationId": chosen} if step["kind"] == "agent_free_conversation" and chosen else step


def _with_ids(request: LifecycleOpen, opened: dict[str, Any]) -> LifecycleOpen:
    return replace(request, agent_id=opened.get("agentId"), model=opened.get("model") or request.model)


def _broken(side: str, impl_label: str, where: str, outcome: Outcome, rows: list[StepRow]) -> Replay:
    who = "reference" if side == "reference" else impl_label
    if outcome.harness_bug:  # the request was never sent: nobody but the harness is at fault
        return Replay(rows, [], error=f"{where}: {outcome.error}")
    if outcome.status == "unsupported" and side != "reference":
        return Replay(rows, [], unsupported=f"{where}: {outcome.error}")
    return Replay(rows, [], error=f"{who} could not run {where}: {outcome.error}", stderr=outcome.stderr)


def _text_diffs(row: StepRow, reference: dict[str, Any], impl: dict[str, Any]) -> list[FieldDiff]:
    names = {d["observation"] for d in row.diffs}
    out = []
    for observation, path in TEXTS:
        if observation in names:
            ref_text, py_text = _text_at(reference, path), _text_at(impl, path)
            in_ref, in_py = _has_text(reference, path), _has_text(impl, path)
            offset = first_diff_offset(as_bytes(ref_text, in_ref), as_bytes(py_text, in_py))
            out.append(FieldDiff(f"{row.label}: {'.'.join(path)}", ref_text, py_text, offset, in_ref, in_py))
    return out
