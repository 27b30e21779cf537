"""The record of one op or lifecycle fuzz session (`conformance fuzz --op OP`, `--lifecycle`), and its loop.

Owns what harness.tools.fuzz.ops and harness.tools.fuzz.lifecycle share: the counts a session keeps (generated
examples run by both sides, known divergences, examples skipped, errors), its findings and its summary line; the
batch loop (batch b runs Hypothesis seed+b until the budget or the example limit runs out; a batch's new
divergence becomes known to later batches, is saved as a case and recorded); and how a finding is written as a
case (`found_by` and `profiles` from harness.tools.reduce.reproduction). Compile fuzzing
(harness.tools.fuzz.campaign) keeps its own report: it also counts compiles, their time and the oracle's stats.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed

from harness.cases.write import dump_yaml, found_by_spec
from harness.run.session import Session
from harness.tools.reduce import reproduction
from harness.verdict.signature import Signature


@dataclass
class Finding:
    """A new divergence: its signature, the batch seed that drew it, and the case it was saved as."""

    signature: Signature
    seed: int
    path: Path | None


@dataclass
class SessionRecord:
    """What a fuzz session did. `what` names it in the summary, `runs_as` says what a run is ("generated op cases
    run by both sides"), `skipped_as` what a skipped example is ("not applicable", "refused at load")."""

    what: str
    runs_as: str
    skipped_as: str
    seed: int
    seconds: float = 0.0
    runs: int = 0
    known: int = 0
    skipped: int = 0
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def count(self, errors: list[str], known: int, skipped: int = 0) -> None:
        """A generated example ran (not one Hypothesis tried while shrinking)."""
        self.runs += 1
        self.errors += errors
        self.known += known
        self.skipped += skipped

    def summary(self) -> str:
        rate = self.runs / self.seconds if self.seconds else 0.0
        lines = [
            f"{self.what}: {self.runs} {self.runs_as} in {self.seconds:.1f} s ({rate:.2f}/s); "
            f"new divergences: {len(self.findings)}; known: {self.known}; {self.skipped_as}: {self.skipped}; "
            f"errors: {len(self.errors)}"
        ]
        lines += [f"  seed {f.seed}: {f.signature.describe()} -> {f.path}" for f in self.findings]
        lines += [f"  error: {e}" for e in self.errors[:5]]
        return "\n".join(lines)


class Found(Exception):
    """A generated example that diverges in a new way: raised inside Hypothesis's test so that it shrinks it."""

    def __init__(self, doc: dict[str, Any], signature: Signature) -> None:
        super().__init__(signature.describe())
        self.doc, self.signature = doc, signature
        self.shrunk = True  # False: the budget ran out while Hypothesis was shrinking it


Test = Callable[..., None]


def batch_settings(batch_seed: int, batch_size: int) -> Callable[[Test], Test]:
    """Hypothesis's settings for one batch (put above `@given`): its seed, `batch_size` examples, no deadline and no
    database (every run draws the same examples), generation then shrinking, and no health check: a slow
    reference is what a session is about."""

    def apply(test: Test) -> Test:
        configured = settings(
            max_examples=batch_size,
            deadline=None,
            database=None,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
        )(test)
        return hypothesis_seed(batch_seed)(configured)

    return apply


#: one batch: (its Hypothesis seed, the session's known signatures, whether to stop) -> its new divergence
Batch = Callable[[int, set[Signature], Callable[[], bool]], Found | None]
#: how a finding is saved: (the divergence, its batch seed) -> the case file written (None: not saved)
Save = Callable[[Found, int], Path | None]


def run_batches(
    record: SessionRecord,
    batch: Batch,
    save: Save,
    *,
    seconds: float,
    known: set[Signature] | None = None,
    max_runs: int | None = None,
) -> SessionRecord:
    """Run batches seed, seed+1, ... until `seconds` pass or `max_runs` examples ran; each new divergence is known
    to the later batches, saved and recorded."""
    seen = set(known or ())
    started = time.monotonic()
    deadline = started + seconds

    def stop() -> bool:
        return time.monotonic() > deadline or (max_runs is not None and record.runs >= max_runs)

    batch_seed = record.seed
    while not stop():
        found = batch(batch_seed, seen, stop)
        if found is not None:
            seen.add(found.signature)
            record.findings.append(Finding(found.signature, batch_seed, save(found, batch_seed)))
        batch_seed += 1
    record.seconds = time.monotonic() - started
    return record


def save_finding(
    session: Session,
    found: Found,
    out_dir: Path,
    case_id: str,
    describe: Callable[[str], str],
    tags: list[str],
    seed: int,
) -> Path:
    """Write `found` as `<out_dir>/<case_id>.yaml`: its document with what reproduces it (`found_by`, `profiles`)
    and `describe(the --reference that shows it)` as its description."""
    ref = next(r for r in session.references if r.label == found.signature.reference)
    found_by, profiles = reproduction(session, ref, seed)
    doc = {
        "id": case_id,
        "description": describe(found_by.reference),
        "tags": tags,
        **({"profiles": list(profiles)} if profiles else {}),
        "found_by": found_by_spec(found_by),
        **found.doc,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{case_id}.yaml"
    path.write_text(dump_yaml(doc), encoding="utf-8")
    return path
