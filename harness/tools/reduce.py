"""`conformance reduce`: shrink a diverging scenario to a small one that diverges the same way.

Delta debugging (ddmin) over, in turn: the compile inputs, the commits, the files, each file's
lines and then bytes, each path's directories and name characters, and symlink / executable
modes. A candidate is kept only when it diverges exactly as the original did (harness.verdict.signature:
the same reference, fields and kind of difference). Every candidate is compiled by the session's
Python port and its one warm reference process (harness.tools.batch_compile); answers are memoized by content.
"""

from __future__ import annotations

import json
import math
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from harness.acquire.revision_source import BuildError
from harness.cases.write import case_document, model_size
from harness.core.model import FoundBy
from harness.core.repomodel import MODE_FILE, MODE_GITLINK, Blob, CommitModel, RepoModel
from harness.core.repospec import valid_tree
from harness.repo.objects import COMMIT_REF
from harness.run.session import Session
from harness.runners.implementations import DEFAULT
from harness.runners.references import ReferenceUnderTest, profile_for_reference
from harness.tools.batch_compile import Candidate, Oracle, candidate_of, candidate_scenario

__all__ = [
    "Candidate",
    "Oracle",
    "Reducer",
    "Reduction",
    "candidate_of",
    "candidate_scenario",
    "ddmin",
    "reduce_candidate",
    "reduced_document",
    "reproduce_command",
    "reproduction",
]
from harness.verdict.signature import Signature

T = TypeVar("T")


def _names_own_commits(model: RepoModel) -> bool:
    """Whether a gitlink of the history names one of its own commits by position (`commit:N`)."""
    return any(
        blob.mode == MODE_GITLINK and blob.data.startswith(COMMIT_REF)
        for commit in model.commits
        for blob in commit.files.values()
    )


def ddmin(items: Sequence[T], test: Callable[[list[T]], bool]) -> list[T]:
    """Zeller's ddmin (complements): a 1-minimal sublist of items that still passes test."""
    current = list(items)
    if current and test([]):
        return []
    granularity = 2
    while len(current) >= 2:
        size = math.ceil(len(current) / granularity)
        for start in range(0, len(current), size):
            complement = current[:start] + current[start + size :]
            if test(complement):
                current = complement
                granularity = max(granularity - 1, 2)
                break
        else:
            if granularity >= len(current):
                break
            granularity = min(granularity * 2, len(current))
    return current


@dataclass
class Reduction:
    candidate: Candidate
    target: Signature
    before: tuple[int, int, int]
    after: tuple[int, int, int]
    tests: int
    seconds: float
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        (f0, b0, c0), (f1, b1, c1) = self.before, self.after
        return (
            f"files {f0} -> {f1}, bytes {b0} -> {b1}, commits {c0} -> {c1} "
            f"({self.tests} candidates tried in {self.seconds:.1f} s); diverges in {self.target.describe()}"
        )


# --- reduction passes -----------------------------------------------------------------------------


def _with_files(model: RepoModel, edit: Callable[[dict[bytes, Blob]], dict[bytes, Blob] | None]) -> RepoModel | None:
    commits = []
    for commit in model.commits:
        files = edit(dict(commit.files))
        if files is None or not valid_tree(files):
            return None
        commits.append(replace(commit, files=files))
    return replace(model, commits=commits)


class Reducer:
    def __init__(self, oracle: Oracle, target: Signature, budget: int = 3000, seconds: float = 600.0) -> None:
        self.oracle, self.target = oracle, target
        self.budget, self.deadline = budget, time.monotonic() + seconds
        self.tests = 0

    @property
    def out_of_budget(self) -> bool:
        return self.tests >= self.budget or time.monotonic() > self.deadline

    def holds(self, candidate: Candidate | None) -> bool:
        if candidate is None or self.out_of_budget:
            return False
        self.tests += 1
        return self.oracle.signature(candidate) == self.target

    def run(self, candidate: Candidate) -> Candidate:
        for _ in range(4):  # passes enable each other; stop at a fixed point
            before = self._measure(candidate)
            for reduction in (self.inputs, self.commits, self.files, self.paths, self.modes, self.contents):
                candidate = reduction(candidate)
            if self._measure(candidate) == before:
                break
        return candidate

    @staticmethod
    def _measure(candidate: Candidate) -> tuple[Any, ...]:
        model = candidate.model
        names = sum(len(n) for n in model.head)
        return (*model_size(model), names, json.dumps(candidate.inputs, sort_keys=True))

    def inputs(self, candidate: Candidate) -> Candidate:
        keys = ddmin(
            sorted(candidate.inputs),
            lambda kept: self.holds(replace(candidate, inputs={k: candidate.inputs[k] for k in kept})),
        )
        candidate = replace(candidate, inputs={k: candidate.inputs[k] for k in keys})
        skills = candidate.inputs.get("client_skills")
        if not isinstance(skills, list):
            return candidate

        def with_skills(kept: list[Any]) -> Candidate:  # fewer client_skills entries, the other inputs as they are
            return replace(candidate, inputs={**candidate.inputs, "client_skills": kept})

        return with_skills(ddmin(skills, lambda kept: self.holds(with_skills(kept))))

    def commits(self, candidate: Candidate) -> Candidate:
        model = candidate.model
        if model.kind != "git" or not model.commits:
            return candidate
        plain = [CommitModel(c.files) for c in model.commits]
        if self.holds(replace(candidate, model=replace(model, commits=plain))):
            model = replace(model, commits=plain)
        if any(commit.parents is not None for commit in model.commits) or _names_own_commits(model):
            return replace(candidate, model=model)  # parents and `commit:N` gitlinks name positions: dropping
            # a commit would move them (a gitlink to a dropped commit could not even be written)
        head, history = model.commits[-1], model.commits[:-1]
        kept = ddmin(history, lambda keep: self.holds(replace(candidate, model=replace(model, commits=[*keep, head]))))
        return replace(candidate, model=replace(model, commits=[*kept, head]))

    def files(self, candidate: Candidate) -> Candidate:
        model = candidate.model

        def keep_only(paths: list[bytes]) -> RepoModel | None:
            wanted = set(paths)
            return _with_files(model, lambda files: {n: b for n, b in files.items() if n in wanted})

        every = sorted({name for commit in model.commits for name in commit.files})
        kept = ddmin(every, lambda paths: self.holds(_candidate(candidate, keep_only(paths))))
        return _candidate(candidate, keep_only(kept)) or candidate

    def contents(self, candidate: Candidate) -> Candidate:
        for name in sorted(candidate.model.head):
            for split in (_lines, _chars, _bytes):
                candidate = self._shrink_blob(candidate, name, split)
        return candidate

    def _shrink_blob(
        self, candidate: Candidate, name: bytes, split: Callable[[bytes], list[bytes] | None]
    ) -> Candidate:
        blob = candidate.model.head.get(name)
        pieces = split(blob.data) if blob is not None and blob.mode != MODE_GITLINK else None
        if blob is None or pieces is None or len(pieces) > 4096:
            return candidate

        def with_data(kept: list[bytes]) -> Candidate | None:
            data = b"".join(kept)
            return _candidate(candidate, _with_head_blob(candidate.model, name, Blob(blob.mode, data)))

        kept = ddmin(pieces, lambda kept: self.holds(with_data(kept)))
        return with_data(kept) or candidate

    def paths(self, candidate: Candidate) -> Candidate:
        """Drop directories from each path, then characters from each of its components."""
        for name in sorted(candidate.model.head):
            parts = name.split(b"/")
            candidate, name = self._shrink_name(candidate, name, parts[:-1], _directories_setter(parts[-1]))
            parts = name.split(b"/")
            for index in range(len(parts)):
                chars = list(parts[index].decode("utf-8", "surrogateescape"))
                candidate, name = self._shrink_name(candidate, name, chars, _component_setter(parts, index))
                parts = name.split(b"/")
        return candidate

    def _shrink_name(
        self, candidate: Candidate, old: bytes, pieces: list[Any], assemble: Callable[[list[Any]], bytes]
    ) -> tuple[Candidate, bytes]:
        def test(keep: list[Any]) -> bool:
            return self.holds(_renamed(candidate, old, assemble(keep)))

        new = assemble(ddmin(pieces, test))
        renamed = _renamed(candidate, old, new)
        return (renamed, new) if renamed is not None else (candidate, old)

    def modes(self, candidate: Candidate) -> Candidate:
        for name, blob in sorted(candidate.model.head.items()):
            if blob.mode != MODE_FILE:
                plain = _candidate(candidate, _with_head_blob(candidate.model, name, Blob(MODE_FILE, blob.data)))
                if self.holds(plain):
                    candidate = plain  # type: ignore[assignment]
        return candidate


def _candidate(base: Candidate, model: RepoModel | None) -> Candidate | None:
    return None if model is None else replace(base, model=model)


def _with_head_blob(model: RepoModel, name: bytes, blob: Blob) -> RepoModel | None:
    head = dict(model.head)
    head[name] = blob
    return replace(model, commits=[*model.commits[:-1], replace(model.commits[-1], files=head)])


def _directories_setter(leaf: bytes) -> Callable[[list[bytes]], bytes]:
    """The path made of the given directories and `leaf`."""

    def assemble(directories: list[bytes]) -> bytes:
        return b"/".join([*directories, leaf])

    return assemble


def _component_setter(parts: list[bytes], index: int) -> Callable[[list[str]], bytes]:
    """The path with component `index` made of the given characters."""

    def assemble(chars: list[str]) -> bytes:
        part = "".join(chars).encode("utf-8", "surrogateescape")
        return b"/".join([*parts[:index], part, *parts[index + 1 :]])

    return assemble


def _renamed(candidate: Candidate, old: bytes, new: bytes) -> Candidate | None:
    if old == new:
        return candidate
    if any(new in c.files for c in candidate.model.commits):
        return None

    def rename(files: dict[bytes, Blob]) -> dict[bytes, Blob]:
        return {(new if n == old else n): b for n, b in files.items()}

    return _candidate(candidate, _with_files(candidate.model, rename))


def _lines(data: bytes) -> list[bytes] | None:
    return data.splitlines(keepends=True)


def _chars(data: bytes) -> list[bytes] | None:
    try:
        return [ch.encode("utf-8") for ch in data.decode("utf-8")]
    except UnicodeDecodeError:
        return None


def _bytes(data: bytes) -> list[bytes] | None:
    return [bytes([b]) for b in data] if len(data) <= 2048 else None


def reduce_candidate(oracle: Oracle, candidate: Candidate, *, budget: int = 3000, seconds: float = 600.0) -> Reduction:
    """Shrink candidate while it diverges as it does now; raises ValueError when it does not diverge."""
    started = time.monotonic()
    target = oracle.signature(candidate)
    if target is None:
        raise ValueError("the case does not diverge against the reference: nothing to reduce")
    reducer = Reducer(oracle, target, budget, seconds)
    smallest = reducer.run(candidate)
    notes = []
    if reducer.out_of_budget:
        notes.append("stopped at the test or time budget; the result may not be minimal")
    return Reduction(
        smallest,
        target,
        model_size(candidate.model),
        model_size(smallest.model),
        reducer.tests,
        time.monotonic() - started,
        notes,
    )


def reproduction(session: Session, ref: ReferenceUnderTest, seed: int | None = None) -> tuple[FoundBy, tuple[str, ...]]:
    """What a case written from a divergence against `ref` records so that running it diverges again: its
    `found_by` (the reference, the profile it was compared under, the fuzz seed, and the implementation when
    it was not the default) and, when `--profile` chose a profile other than the reference's own, `profiles:
    [that profile]`, so that a run under another profile reports the case not applicable, saying why, instead
    of passing it."""
    impls = session.implementations
    impl = impls[0].label if len(impls) == 1 and impls[0] != DEFAULT else None
    found_by = FoundBy(ref.spec.cli if ref.spec is not None else ref.label, ref.profile, seed, impl)
    chosen = session.profile_override is not None and ref.profile != _own_profile(ref)
    return found_by, ((ref.profile,) if chosen else ())


def reproduce_command(found_by: FoundBy, path: str) -> str:
    """The `conformance run` command that shows a written case's divergence again."""
    impl = ["--impl", found_by.implementation] if found_by.implementation else []
    argv = [path, "--reference", found_by.reference, "--profile", found_by.profile, *impl]
    return "conformance run " + " ".join(shlex.quote(part) for part in argv)


def _own_profile(ref: ReferenceUnderTest) -> str | None:
    """The profile the reference is compared under when no --profile is given (None: it has none)."""
    try:
        return profile_for_reference(ref.spec, None) if ref.spec is not None else None
    except (ValueError, KeyError, BuildError):  # a git revision with no profile of its own
        return None


def reduced_document(
    reduction: Reduction, case_id: str, origin: str, found_by: FoundBy, profiles: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The reduced case: what reproduces it (`found_by`, `profiles`: reproduction), tagged `reduced` (and
    `fuzz` when a fuzz run drew it); the original's other tags are dropped, since what they said of its
    files need not hold of what is left."""
    return case_document(
        case_id,
        f"Reduced from {origin} by conformance reduce; diverges in {reduction.target.describe()}.",
        reduction.candidate.model,
        tags=["fuzz", "reduced"] if found_by.seed is not None else ["reduced"],
        inputs=reduction.candidate.inputs,
        found_by=found_by,
        profiles=profiles,
    )
