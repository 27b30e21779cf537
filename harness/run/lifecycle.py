"""Lifecycle probes: replaying a conversation's steps on two implementations, turn by turn.

A lifecycle scenario (cases/lifecycle/*.yaml) starts from a repository and a list of steps:
user turns, memory commits, raw system prompt edits, model changes, new conversations and
explicit recompiles. Each reference replays them on upstream's real turn loop (a recording
executor captures what the model would receive), the implementation under test on its own (the
Python port on `memfs_prompt.conversation`); each side reads its own working copy of the repository
(upstream writes into it), in which the harness makes the same repository steps between turns
(commits, amends, resets, work-tree edits left uncommitted, a broken HEAD: harness.repo.checkout).

Every step yields observations (`observe`): hashes of the system prompt and of the cached record,
whether each of the case's facts is in the system prompt, in the mid-conversation text, in what
is sent and in what is stored, how many `<memory_update>` blocks are sent, the roles of the
messages, and the client loop's reminders put before the user's text (`reminders`, compared in full).
They are compared per step and per observation; texts that differ are byte-diffed.
A case may also record what real builds were measured to do (`recorded`); a reference that no
longer does so fails, and a `golden` case checks the Python port against expectations quoted
from the spec.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.core.model import FieldDiff, LifecycleOpen, Outcome, Replay, Scenario, StepRow
from harness.repo.build import MaterializedRepo, materialize_repo
from harness.repo.checkout import REPOSITORY_STEPS, Checkout
from harness.repo.discard import discard
from harness.repo.gitenv import isolated_env
from harness.runners import result_store
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
        # the client loop's reminders before the user's content (docs/lifecycle.md, "Reminders on a turn"): None
        # where the side builds none (an agent-free conversation, a release without the reminder engine)
        obs["reminders"] = record.get("reminders")
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


@dataclass
class SideRun:
    """One side's run of a probe on its own working copy: what it observed at the open (index 0) and at each
    step it reached, and where and why it stopped early. The implementation's side is given the reference's
    run as `lead` (the ids upstream chose) and so is a function of the probe, the profile and those ids."""

    opened: dict[str, Any] = field(default_factory=dict)  # the open's `opened` (agent id, model)
    observations: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any] | None] = field(default_factory=list)  # per step; None for a repository step
    thrown: dict[int, str | None] = field(default_factory=dict)  # step index -> what upstream (or the port) threw
    broken: tuple[int, Outcome] | None = None  # where it could not go on (an error, unsupported), and why
    raised: tuple[int, BaseException] | None = None  # where the harness itself failed (a repository step)
    work: str = ""  # its temporary directory, which texts name as <work>

    @property
    def stop(self) -> int | None:
        """The index it stopped at (0: the open), or None when it ran every step."""
        ends = [at for at, _ in filter(None, (self.broken, self.raised))]
        return min(ends) if ends else None

    def lead(self) -> Lead:
        """What a side led by this one is given: every other input is the probe's and the profile's."""
        return Lead(self.opened, tuple(map(_chosen_conversation, self.records)), self.stop)


@dataclass(frozen=True)
class Lead:
    """What the reference's run hands the implementation's side: the ids it chose (the agent's, at the open; an
    agent-free conversation's, per step) and where it stopped."""

    opened: dict[str, Any]
    chosen: tuple[str | None, ...]
    stop: int | None

    @property
    def handoff(self) -> tuple[Any, ...]:
        """The lead as a key: sides given equal leads are one run."""
        return self.opened.get("agentId"), self.chosen, self.stop  # the model is each side's own (_with_ids)


@dataclass(frozen=True)
class Probe:
    """What both sides of one replay share: the case, its steps in the protocol's form, its repository as built,
    where the working copies go, and the profile."""

    scenario: Scenario
    steps: list[dict[str, Any]]
    materialized: MaterializedRepo
    work_root: Path
    cache: Path
    profile: str | None


@dataclass(frozen=True)
class ImplSide:
    """The implementation's side of one replay, to be run with a runner of the implementation (here, or in a
    worker process with one of its own: harness.run.port_pool). It pickles: a probe, a number and a lead."""

    probe: Probe
    number: int
    lead: Lead | None

    @property
    def handoff(self) -> tuple[Any, ...]:
        """What besides the probe and the profile the side depends on: the reference's lead."""
        return self.lead.handoff if self.lead is not None else ()

    def run(self, runner: Runner) -> SideRun:
        return run_side(self.probe, runner, "impl", self.number, self.lead)


#: share(side, run): the implementation's side `side`, run (with `run()`, or elsewhere) once per handoff
ShareSides = Callable[[ImplSide, Callable[[], SideRun]], SideRun]


def replay(
    scenario: Scenario,
    reference: Runner | None,
    impl: Runner,
    impl_label: str,
    work_root: Path,
    cache: Path,
    profile: str | None = None,
    share: ShareSides | None = None,
) -> Replay:
    """Run the steps on the reference (first, when there is one: a golden probe has none), then on the
    implementation under test, each over its own working copy, and put the two runs side by side.

    `share(side, run)`, when given, returns the implementation's side, running it (with `run()`, or elsewhere)
    only the first time for its handoff: references that hand the implementation the same ids share one run."""
    probe = Probe(scenario, wire_steps(scenario), materialize_repo(scenario, cache), work_root, cache, profile)
    lead = run_side(probe, reference, "reference", 0) if reference is not None else None
    side = ImplSide(probe, 0 if lead is None else 1, lead.lead() if lead else None)  # copy-0, copy-1: one length

    def own() -> SideRun:
        return side.run(impl)

    return combine(probe, lead, own() if share is None else share(side, own), impl_label)


def run_side(probe: Probe, runner: Runner, side: str, number: int, lead: Lead | None = None) -> SideRun:
    """One side of a probe: a working copy of the case's repository, the open and the steps (up to where
    `lead` stopped), each step's observations; the runner's session is closed and the copy removed after."""
    if lead is not None and lead.stop == 0:
        return SideRun()  # the lead could not open: this side is never asked
    run = SideRun()
    work = probe.work_root / f"lifecycle-{secrets.token_hex(8)}"  # made with the copy: a stored probe needs neither
    run.work = str(work)
    materialized, scenario = probe.materialized, probe.scenario
    copy = work / f"copy-{number}"
    request = LifecycleOpen(
        memory_dir=copy / materialized.memory_dir.relative_to(materialized.root),
        storage_dir=work / f"storage-{side}",
        system=scenario.inputs["system"],
        now=scenario.inputs["now"],
        model=scenario.model,
        delivery=scenario.delivery,
        profile=probe.profile,
    )
    if lead is not None and lead.opened:
        request = _with_ids(request, lead.opened)

    def make_copy() -> Checkout:
        work.mkdir(parents=True)  # a name another side drew too is an error, never a shared directory
        shutil.copytree(materialized.root, copy, symlinks=True)
        return Checkout(copy / "memory", scenario, isolated_env(probe.cache / "home", ceiling=probe.cache / "repos"))

    try:
        checkout = result_store.working_copy(runner, request, make_copy)  # none for a probe the store answers
        _run_steps(probe, runner, run, checkout, request, lead)
    except Exception as error:  # reported as the replay's error, where the interleaved replay would raise it
        run.raised = (len(run.observations), error)
    finally:
        runner.lifecycle_close()
        discard(work)  # in the background (harness.repo.discard); none there for a stored probe
    return run


def _run_steps(
    probe: Probe,
    runner: Runner,
    run: SideRun,
    checkout: result_store.RepositorySteps,
    request: LifecycleOpen,
    lead: Lead | None,
) -> None:
    facts: dict[str, str] = dict(probe.scenario.facts)
    outcome = runner.lifecycle_open(request)
    if outcome.status == "thrown":  # upstream could not open (a `.git` file: no hooks directory); no step runs
        run.thrown[0] = outcome.thrown
        run.observations.append({"thrown": True})
        return
    if outcome.status != "ok":
        run.broken = (0, outcome)
        return
    record = outcome.record or {}
    run.opened = record.get("opened") or {}
    run.observations.append({**observe(record, facts, None), "model": run.opened.get("model")})
    previous: str | None = None
    limit = len(probe.steps) if lead is None or lead.stop is None else lead.stop - 1
    for index, step in enumerate(probe.steps[:limit], start=1):
        if step["kind"] in REPOSITORY_STEPS:  # the harness's own, the same in every side's checkout
            run.observations.append({"head": checkout.run(step["kind"], step[step["kind"]])})
            run.records.append(None)
            continue
        outcome = runner.lifecycle_step(_with_chosen_id(step, lead.chosen[index - 1] if lead else None))
        if outcome.status in ("error", "unsupported"):
            run.broken = (index, outcome)
            return
        if outcome.status == "thrown":
            run.thrown[index] = outcome.thrown
            run.records.append({"thrown": outcome.thrown})
            run.observations.append({"thrown": True})
            continue
        record = outcome.record or {}
        run.records.append(record)
        run.observations.append(observe(record, facts, previous))
        executed = record.get("executed")
        if executed is not None:
            previous = executed.get("systemPrompt")


def combine(probe: Probe, lead: SideRun | None, own: SideRun, impl_label: str) -> Replay:
    """The two sides' runs as one replay, step by step, the reference's side first at each step: where
    either stopped, the replay stops as if the sides had been run turn by turn together."""
    sides = ([("reference", lead)] if lead is not None else []) + [("impl", own)]
    works = [run.work for _, run in sides if run.work]
    try:
        result = _combined(probe.steps, sides, impl_label)
    except Exception as error:  # the case is an error; the run goes on
        result = Replay([], [], error=f"could not replay: {type(error).__name__}: {error}")
    for work in works:  # the same text on every run: no temporary directory names
        result.error = result.error.replace(work, "<work>") if result.error else result.error
        result.stderr = result.stderr.replace(work, "<work>")
        result.thrown = [text.replace(work, "<work>") for text in result.thrown]
    return result


def _combined(steps: list[dict[str, Any]], sides: list[tuple[str, SideRun]], impl_label: str) -> Replay:
    rows = [StepRow(0, "open")]
    text_diffs: list[FieldDiff] = []
    thrown: list[str] = []
    turn = 0
    for index in range(len(steps) + 1):
        step = steps[index - 1] if index else None
        if step is not None:
            turn += step["kind"] == "turn"
            rows.append(StepRow(index, _label(step, turn)))
        row = rows[-1]
        for side, run in sides:
            if run.raised is not None and run.raised[0] == index:
                raise run.raised[1]
            if run.broken is not None and run.broken[0] == index:
                return _broken(side, impl_label, row.label, run.broken[1], rows)
            setattr(row, side, run.observations[index])
            if index in run.thrown:
                who = "reference" if side == "reference" else impl_label
                thrown.append(f"{who} threw at {row.label}: {run.thrown[index]}")
        if step is not None and len(sides) == 2:
            row.diffs = observation_diffs(row.reference, row.impl)
            if step["kind"] not in REPOSITORY_STEPS:
                lead, own = sides[0][1], sides[1][1]
                text_diffs += _text_diffs(row, lead.records[index - 1] or {}, own.records[index - 1] or {})
        if index == 0 and any(0 in run.thrown for _, run in sides):  # an open that threw: no step follows
            break
    if len(sides) == 2:
        rows[0].diffs = observation_diffs(rows[0].reference, rows[0].impl)
    return Replay(rows, text_diffs, thrown=thrown)


def _chosen_conversation(record: dict[str, Any] | None) -> str | None:
    """The id of the agent-free conversation a step's record says its side opened, if any."""
    return ((record or {}).get("agentFree") or {}).get("conversationId")


def _with_chosen_id(step: dict[str, Any], chosen: str | None) -> dict[str, Any]:
    """An agent-free conversation's id is `local-conv-<randomUUID()>`: the reference chooses it, the others take it."""
    return {**step, "conversationId": chosen} if step["kind"] == "agent_free_conversation" and chosen else step


def _with_ids(request: LifecycleOpen, opened: dict[str, Any]) -> LifecycleOpen:
    """The reference's agent id (an id is a compiler input no release takes); the model stays the case's own, as
    each side chooses what it stores at creation (compared at the open)."""
    return replace(request, agent_id=opened.get("agentId"))


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
