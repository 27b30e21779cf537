"""One-shot op cases (cases/ops/): one request of a protocol op on a case's repository, the same on every side.

Owns how an op case runs against one reference: each side (the reference, then each implementation under
test) gets its own copy of the built repository (an op may write: `git status` alone refreshes the index),
is sent `{op, memoryDir, profile, **args}` (`harness.core.protocol.OPS`, rows with `case=True`), and its
answer becomes a record of the op's fields (a thrown message is the record's `thrown`, compared as text);
with the row's `compares_repo`, the repository afterwards joins it as `repoAfter` (harness.repo.after). The
copy's own path is written `<memoryDir>` in every answer, so that each side's copy can live anywhere and
reports are the same bytes on every run. A reference that answers `unsupported` (a release without the
op's code) makes the case not applicable against it, with the reference's reason.

Op cases run under each reference's baseline runtime only (as lifecycle probes) and are not kept in the
result store: each run asks the live reference.
"""

from __future__ import annotations

import dataclasses
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from harness.core.model import CaseResult, Divergence, Outcome, Scenario
from harness.core.protocol import OPS, REPO_AFTER, request
from harness.repo.after import repository_after
from harness.repo.build import MaterializedRepo
from harness.repo.discard import discard
from harness.repo.gitenv import isolated_env
from harness.runners.base import Runner
from harness.runners.implementations import ImplSpec
from harness.runners.references import ReferenceUnderTest
from harness.verdict.diff import presence, structured_diff
from harness.verdict.judge import judge

#: how an answer writes the memory directory it was asked about (each side's copy has its own path)
MEMORY_DIR_MARK = "<memoryDir>"


def _marked(value: Any, memory_dir: str) -> Any:
    if isinstance(value, str):
        return value.replace(memory_dir, MEMORY_DIR_MARK)
    if isinstance(value, list):
        return [_marked(item, memory_dir) for item in value]
    if isinstance(value, dict):
        return {key: _marked(item, memory_dir) for key, item in value.items()}
    return value


def as_op_record(outcome: Outcome, memory_dir: Path) -> Outcome:
    """The answer as an op case compares it: a thrown message in the record, the copy's path marked."""
    if outcome.status == "thrown":
        outcome = dataclasses.replace(outcome, status="ok", record={"thrown": outcome.thrown}, thrown=None)
    if outcome.status != "ok" or outcome.record is None:
        return outcome
    return dataclasses.replace(outcome, record=_marked(outcome.record, str(memory_dir)))


def ask_on_copy(
    runner: Runner, scenario: Scenario, repo: MaterializedRepo, profile: str, work: Path, home: Path
) -> tuple[Outcome, dict[str, Any]]:
    """`runner`'s answer to the case's request on a fresh copy of `repo` (removed after), and the request as
    sent with the copy's path marked (for the report)."""
    assert scenario.op is not None
    copy = work / f"op-{secrets.token_hex(8)}"
    shutil.copytree(repo.root, copy, symlinks=True)  # copy2 keeps the pinned mtimes
    memory_dir = copy / repo.memory_dir.relative_to(repo.root)
    sent = request(scenario.op, memoryDir=str(memory_dir), profile=profile, **scenario.args)
    try:
        outcome = as_op_record(runner.ask(sent), memory_dir)
        if OPS[scenario.op].compares_repo and outcome.status == "ok" and outcome.record is not None:
            after = repository_after(memory_dir, isolated_env(home, ceiling=work))
            outcome = dataclasses.replace(
                outcome, record={**outcome.record, REPO_AFTER: _marked(after, str(memory_dir))}
            )
    finally:
        discard(copy)
    return outcome, _marked({k: v for k, v in sent.items() if k != "op"}, str(memory_dir))


class OpSession(Protocol):
    """What an op case asks of the run (harness.run.session.Session): its cache, its implementations under test,
    their runners, what they do not declare, what their expectations files expect, and its not-applicable
    results."""

    cache: Path
    implementations: list[ImplSpec]

    def impl(self, spec: ImplSpec, profile: str, slot: int = 0) -> Runner: ...

    def undeclared(self, scenario: Scenario, impl: ImplSpec, profile: str, slot: int = 0) -> Outcome | None: ...

    def expected(self, scenario: Scenario, impl: ImplSpec, label: str, profile: str) -> tuple[Divergence, ...]: ...

    def not_applicable(
        self,
        scenario: Scenario,
        refs: list[ReferenceUnderTest],
        why: Callable[[ReferenceUnderTest], str] | None = None,
        **rest: Any,
    ) -> list[CaseResult]: ...


def op_against(
    session: OpSession, scenario: Scenario, ref: ReferenceUnderTest, repo: MaterializedRepo, slot: int
) -> list[CaseResult]:
    """One op case against one reference: every implementation's answer compared with the reference's."""
    work, home = session.cache / "repos" / ".ops", session.cache / "home"
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    reference, sent = ask_on_copy(ref.runner, scenario, repo, ref.profile, work, home)
    if reference.status == "unsupported":
        return session.not_applicable(
            scenario,
            [ref],
            lambda ref: f"{ref.label} does not serve this request: {reference.error}",  # no op, or not this mode
            reference_outcome=reference,  # the drift report reads where the op appears
        )
    results = []
    fields = OPS[str(scenario.op)].case_fields
    for impl in session.implementations:
        outcome = session.undeclared(scenario, impl, ref.profile, slot)
        if outcome is None:
            outcome, _ = ask_on_copy(session.impl(impl, ref.profile, slot), scenario, repo, ref.profile, work, home)
        expected = session.expected(scenario, impl, ref.label, ref.profile)
        status, diffs, reasons = judge(
            scenario, ref.label, reference, outcome, fields, impl_label=impl.label, expected=expected
        )
        result = CaseResult.of_case(
            scenario,
            ref.label,
            ref.profile,
            status,
            impl.label,
            diffs=diffs,
            reasons=reasons + reference.notes,
            reference_outcome=reference,
            impl_outcome=outcome,
            structured=structured_diff(reference.record, outcome.record) if diffs else "",
            memory_dir=MEMORY_DIR_MARK,
            request=sent,
            seconds=time.perf_counter() - started,
        )
        if reference.status == "ok" and outcome.status == "ok":
            result.compared = presence(reference, outcome, fields)
        results.append(result)
    return results
