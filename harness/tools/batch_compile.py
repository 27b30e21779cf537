"""The differential oracle `fuzz` and `reduce` share: candidates (a repository model and inputs) compiled by a
session's Python port and its warm reference processes, answered as divergence signatures.

A batch of candidates is built straight from the model (harness.repo.build.build_repo: git objects, a work
tree only when the model has one) under the session's repository directory, with no scenario file and no
YAML in between; the reference gets the whole batch at once (Runner.prefetch: the driver answers in order)
while the Python port compiles the same repositories, then every pair is judged by the session
(Session.run_case, as for a corpus case). Answers are memoized by candidate content.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cases.load import DEFAULT_INPUTS
from harness.cases.write import repo_spec
from harness.core.model import Scenario
from harness.core.repomodel import RepoModel
from harness.core.repospec import model_of
from harness.repo.build import MaterializedRepo, build_repo, needs_worktree
from harness.run.session import Session, build_request
from harness.verdict.signature import Signature, signature_of

SHM = Path("/dev/shm")


def scratch_parent() -> str | None:
    """Where a fuzz or reduce session should build its repositories: a memory file system when there is one
    (thousands of small repositories are written and removed; on a disk that is most of the time), else the
    default temporary directory (None)."""
    return str(SHM) if SHM.is_dir() and os.access(SHM, os.W_OK | os.X_OK) else None


@dataclass
class Candidate:
    model: RepoModel
    inputs: dict[str, Any]


def candidate_scenario(candidate: Candidate, case_id: str, workdir: Path, *, spec: bool = True) -> Scenario:
    """An in-memory scenario (no file) for a candidate; `spec=False` leaves its `repo` mapping empty (the
    oracle builds the repository from the model, so the case text is not needed)."""
    return Scenario(
        id=case_id,
        description="reduction candidate",
        path=workdir / "compile" / f"{case_id}.yaml",
        tags=(),
        inputs={**DEFAULT_INPUTS, **candidate.inputs},
        repo=repo_spec(candidate.model) if spec else {},
    )


def candidate_of(scenario: Scenario) -> Candidate:
    inputs = {k: v for k, v in scenario.inputs.items() if k not in DEFAULT_INPUTS or DEFAULT_INPUTS[k] != v}
    return Candidate(model_of(scenario), inputs)


def candidate_key(candidate: Candidate) -> str:
    """Names a candidate by content (cheap: no YAML), for the memo."""
    model = candidate.model
    commits = [
        (sorted((n, b.mode, b.data) for n, b in c.files.items()), c.message, c.author, c.committer)
        for c in model.commits
    ]
    noise = model.worktree
    worktree = (sorted((n, b.mode, b.data) for n, b in noise.files.items()), sorted(noise.delete), noise.stage)
    inputs = json.dumps(candidate.inputs, sort_keys=True, ensure_ascii=True, default=repr)
    text = repr((commits, model.kind, model.memory_subdir, worktree, model.shape, inputs))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class OracleStats:
    """Where the oracle's time went (seconds), for `fuzz` reports and benchmarks/."""

    compiles: int = 0  # candidates built and compiled by both sides
    seconds: float = 0.0  # building, compiling and judging them (wall clock)
    build: float = 0.0
    port: float = 0.0  # the Python port's compiles
    reference: float = 0.0  # the reference's compiles (answer to answer, overlapping the port's in a batch)
    batches: list[int] = field(default_factory=list)


@dataclass
class Batch:
    """Candidates submitted to the oracle: their keys in order, the repositories built and sent, failed builds."""

    keys: list[str]
    built: list[tuple[str, Scenario, MaterializedRepo]] = field(default_factory=list)
    failed: dict[str, dict[str, Signature | None]] = field(default_factory=dict)
    dests: list[Path] = field(default_factory=list)


class Oracle:
    """Compiles candidates with one session (one warm reference process) and answers their signature."""

    def __init__(self, session: Session, reference: str | None = None) -> None:
        self.session = session
        self.reference = reference
        self.workdir = session.cache / "candidates"  # only names the in-memory scenarios; nothing is written there
        self.memo: dict[str, dict[str, Signature | None]] = {}
        self.stats = OracleStats()
        self.errors: list[str] = []  # candidates that could not be built, or a reference that could not run
        self._serial = 0

    @property
    def compiles(self) -> int:
        return self.stats.compiles

    @property
    def compile_seconds(self) -> float:
        return self.stats.seconds

    def signatures(self, candidate: Candidate) -> dict[str, Signature | None]:
        """Signature per reference label (None = agrees, or the reference could not run)."""
        return self.signatures_many([candidate])[0]

    def signatures_many(self, candidates: list[Candidate]) -> list[dict[str, Signature | None]]:
        """`signatures` of each candidate; the ones not memoized are compiled as one batch."""
        return self.collect(self.submit(candidates))

    def submit(self, candidates: list[Candidate]) -> Batch:
        """Build the candidates not memoized yet and send them to the reference, which starts on them at once;
        `collect` then compiles them with the Python port and judges. In between, the caller is free (to
        generate the next batch while the reference works)."""
        started = time.perf_counter()
        keys = [candidate_key(c) for c in candidates]
        todo = {key: c for key, c in zip(keys, candidates, strict=True) if key not in self.memo}
        batch = Batch(keys)
        if not todo:
            return batch
        self.session.start()
        for key, candidate in todo.items():
            self._serial += 1
            dest = self.session.ceiling / f"candidate-{self._serial}"
            batch.dests.append(dest)
            scenario = candidate_scenario(candidate, "candidate", self.workdir, spec=False)
            try:
                model = candidate.model
                repo = build_repo(model, dest, self.session.git_env, worktree=needs_worktree(model, False))
            except (OSError, subprocess.CalledProcessError) as error:
                self.errors.append(f"could not build the repository: {type(error).__name__}: {error}")
                batch.failed[key] = {ref.label: None for ref in self.session.references}
                continue
            batch.built.append((key, scenario, repo))
        requests = [build_request(scenario, repo) for _, scenario, repo in batch.built]
        for ref in self.session.references:
            ref.runner.prefetch(requests)
        self.stats.build += time.perf_counter() - started
        self.stats.seconds += time.perf_counter() - started
        return batch

    def collect(self, batch: Batch) -> list[dict[str, Signature | None]]:
        """The signatures of a submitted batch's candidates, in order (memoized from now on)."""
        started = time.perf_counter()
        self.memo.update(batch.failed)
        for key, scenario, repo in batch.built:
            self.memo[key] = self._judge(self.session.run_case(scenario, repo=repo))
        for dest in batch.dests:
            shutil.rmtree(dest, ignore_errors=True)
        if batch.dests:
            self.stats.compiles += len(batch.dests)
            self.stats.batches.append(len(batch.dests))
        self.stats.seconds += time.perf_counter() - started
        return [self.memo[key] for key in batch.keys]

    def _judge(self, results: list[Any]) -> dict[str, Signature | None]:
        out: dict[str, Signature | None] = {}
        for result in results:
            if result.impl_outcome is not None:
                self.stats.port += (result.impl_outcome.elapsed_ms or 0.0) / 1000
            if result.reference_outcome is not None:
                self.stats.reference += (result.reference_outcome.elapsed_ms or 0.0) / 1000
            if result.reference_outcome is None or result.impl_outcome is None:
                self.errors.append(f"[{result.reference}] " + "; ".join(result.reasons))
                out[result.reference] = None
                continue
            if result.reference_outcome.status == "error":
                self.errors.append(f"[{result.reference}] reference could not run: {result.reference_outcome.error}")
            out[result.reference] = signature_of(result.reference, result.reference_outcome, result.impl_outcome)
        return out

    def signature(self, candidate: Candidate) -> Signature | None:
        """The signature against `reference` (default: the session's first reference)."""
        sigs = self.signatures(candidate)
        label = self.reference or next(iter(sigs), None)
        return sigs.get(label) if label else None

    def close(self) -> None:
        """Nothing to release: the session owns the reference process and the repositories."""
