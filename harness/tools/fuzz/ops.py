"""`conformance fuzz --op <op>`: Hypothesis-generated op cases (cases/ops/) run on the references and the port.

Owns the loop for one-shot ops. A strategy of OP_STRATEGIES draws an op case's `repo`, `op` and `args`
(harness.tools.fuzz.views for `memory_view`, harness.tools.fuzz.worktrees for `memory_write`,
harness.tools.fuzz.staged for `validate`); each document is
read by the case loader (so it obeys every case rule: a document the loader refuses is an error of the strategy,
reported, never run) and run by `Session.run_case` exactly as `conformance run` runs a case file (each side gets
its own copy of the built repository: harness.run.op_case). A divergence is a failing result; its signature is
the reference and the (field, kind of difference) pairs of its diffs (harness.verdict.signature). Batch b runs
Hypothesis seed+b; the first new signature in a batch is shrunk by Hypothesis (`reduce` handles compile cases
only) and saved as `<out>/fuzz-<op>-<seed>.yaml` with `found_by`, so that `conformance run` shows it again.
Signatures of op cases of the same op that an earlier fuzz run saved, or that record divergences for one of the
session's references, are known: counted, not saved again.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from harness.cases.load import discover, load_scenarios, load_text
from harness.cases.write import dump_yaml
from harness.core.model import CaseResult, Scenario, ScenarioError, Status
from harness.run.session import Session
from harness.tools.fuzz.record import Found, SessionRecord, batch_settings, run_batches, save_finding
from harness.tools.fuzz.staged import validate_documents
from harness.tools.fuzz.views import view_documents
from harness.tools.fuzz.worktrees import write_documents
from harness.verdict.signature import Signature, field_kind, pick_divergence


@dataclass(frozen=True)
class OpStrategy:
    """How `--op` fuzzes one op: the strategy drawing its cases' {repo, op, args} (without id and description),
    and the tag naming the op's family on a saved case (docs/cases.md's tag list)."""

    draw: Callable[[], st.SearchStrategy[dict[str, Any]]]
    tag: str

    @property
    def tags(self) -> list[str]:
        return ["op", self.tag, "fuzz"]


#: op -> how its cases are drawn and tagged
OP_STRATEGIES: dict[str, OpStrategy] = {
    "memory_view": OpStrategy(view_documents, "memory-view"),
    "memory_write": OpStrategy(write_documents, "memory-write"),
    "validate": OpStrategy(validate_documents, "commit-validation"),
}


def op_scenario(doc: dict[str, Any], case_id: str, workdir: Path) -> Scenario:
    """The op case a generated document stands for, read by the loader (ScenarioError when it refuses it)."""
    full = {"id": case_id, "description": "generated op probe", "tags": OP_STRATEGIES[doc["op"]].tags, **doc}
    return load_text(dump_yaml(full), workdir / "ops" / f"{case_id}.yaml", "op")


def result_signature(result: CaseResult) -> Signature | None:
    """A failing result's signature: its reference and the kinds of its field differences (None otherwise)."""
    if result.status != Status.FAIL:
        return None
    if result.impl_outcome is not None and result.impl_outcome.status == "error":
        crash = (result.impl_outcome.error or "").split(":", 1)[0] or "error"
        return Signature(result.reference, (("error", f"impl-crash:{crash}"),))
    return Signature(result.reference, tuple(sorted({(d.field, field_kind(d)) for d in result.diffs})))


def op_signatures(session: Session, scenario: Scenario) -> tuple[dict[str, Signature], list[str], int]:
    """Per reference: the signature of the case's divergence; the errors; how many results were not applicable."""
    signatures: dict[str, Signature] = {}
    errors: list[str] = []
    skipped = 0
    for result in session.run_case(scenario):
        if result.status == Status.ERROR:
            errors.append(f"[{result.reference}] " + "; ".join(result.reasons))
        skipped += result.status == Status.NOT_APPLICABLE
        if (signature := result_signature(result)) is not None:
            signatures.setdefault(result.reference, signature)
    return signatures, errors, skipped


def known_op_signatures(session: Session, op: str, case_dirs: list[Path]) -> set[Signature]:
    """Signatures of `op`'s cases that an earlier fuzz run saved or that record divergences (each run once)."""
    labels = {ref.label for ref in session.references}
    files = [p for p in discover([d for d in case_dirs if d.exists()]) if _may_be_known(p)]
    known: set[Signature] = set()
    for scenario in load_scenarios(files).scenarios:
        if scenario.kind != "op" or scenario.op != op:
            continue
        if "fuzz" in scenario.tags or any(d.applies_to(label) for d in scenario.divergences for label in labels):
            for result in session.run_case(scenario):
                if result.status in (Status.FAIL, Status.KNOWN):
                    diffs = {(d.field, field_kind(d)) for d in result.diffs}
                    known.add(Signature(result.reference, tuple(sorted(diffs))))
    return known


def _may_be_known(path: Path) -> bool:
    """Read as text first: loading every case of the corpus costs seconds, and few are fuzz-found or diverge."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return "fuzz" in text or "divergences" in text


def op_record(op: str, seed: int) -> SessionRecord:
    """The record of an op fuzz session: skipped examples are results of a reference without the op (it answered
    `unsupported`)."""
    return SessionRecord(op, "generated op cases run by both sides", "not applicable", seed)


class _OutOfTime(BaseException):
    """The budget (or `max_runs`) ran out: a BaseException, so that Hypothesis neither shrinks nor replays it."""


def fuzz_op(
    session: Session,
    op: str,
    *,
    seconds: float,
    seed: int = 0,
    out_dir: Path | None = None,
    known: set[Signature] | None = None,
    batch_size: int = 20,
    max_runs: int | None = None,
) -> SessionRecord:
    """Run generated cases of `op` until `seconds` pass (or `max_runs` were run); batch b runs Hypothesis seed+b.
    `seconds` bounds the shrinking too: when it runs out, a finding is saved as far as it was shrunk."""
    record = op_record(op, seed)
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="letta-opfuzz-") as tmp:

        def batch(batch_seed: int, seen: set[Signature], stop: Callable[[], bool]) -> Found | None:
            return _batch(session, record, seen, Path(tmp), (op, batch_seed, batch_size), stop, deadline)

        def save(found: Found, batch_seed: int) -> Path | None:
            return _save(session, found, op, batch_seed, out_dir) if out_dir is not None else None

        return run_batches(record, batch, save, seconds=seconds, known=known, max_runs=max_runs)


def _save(session: Session, found: Found, op: str, batch_seed: int, out_dir: Path) -> Path:
    """Write the shrunk document as `<out_dir>/fuzz-<op>-<seed>.yaml` with what reproduces it (`found_by`)."""

    def describe(reference: str) -> str:
        return (
            f"Found by `conformance fuzz --op {op} --seed {batch_seed} --reference {reference}`, "
            + ("shrunk by Hypothesis" if found.shrunk else "not fully shrunk: the --seconds budget ran out")
            + f" (`conformance reduce` handles compile cases only); differs in {found.signature.describe()}."
        )

    case_id = f"fuzz-{op.replace('_', '-')}-{batch_seed}"
    return save_finding(session, found, out_dir, case_id, describe, OP_STRATEGIES[op].tags, batch_seed)


def _batch(
    session: Session,
    record: SessionRecord,
    seen: set[Signature],
    workdir: Path,
    which: tuple[str, int, int],
    stop: Callable[[], bool],
    deadline: float,
) -> Found | None:
    """One Hypothesis run of `batch_size` examples (generate, then shrink the first new divergence)."""
    op, batch_seed, batch_size = which
    target: list[Signature] = []
    best: list[Found] = []

    @batch_settings(batch_seed, batch_size)
    @given(OP_STRATEGIES[op].draw())
    def check(doc: dict[str, Any]) -> None:
        if (not target and stop()) or time.monotonic() > deadline:
            raise _OutOfTime  # Hypothesis stops at once (a shrink in progress keeps what it has: `best`)
        try:
            scenario = op_scenario(doc, "candidate", workdir)
        except ScenarioError as error:  # the strategy drew what no case may say: its bug, reported
            if not target:
                record.errors.append(f"seed {batch_seed}: the loader refused a generated case: {error}")
            return
        signatures, errors, skipped = op_signatures(session, scenario)
        found, known = pick_divergence(signatures.values(), seen, target)
        if not best:  # a generated example (once one diverged, Hypothesis is shrinking: not counted)
            record.count(errors, known, skipped)
        if found is not None:
            best[:] = [Found(doc, found)]  # Hypothesis only tries examples smaller than its smallest so far
            raise best[0]

    try:
        check()
    except _OutOfTime:
        for found in best:
            found.shrunk = False
    except (Found, Flaky):  # Flaky: a divergence that did not diverge again when replayed
        pass
    return best[0] if best else None
