"""The records of `conformance upstream-tests` (standard library only): what one bun test file run gave,
the verdict of each upstream test, and a revision's and a run's results. Reports read these without
loading the runners, the bridge or bun.

Verdicts (`Verdict`; the rule is harness.tools.upstream.verdict's) say who is at fault (`fault`):
- pass: upstream's test passed with its swapped modules replaced by their shims (the implementation under test
  served its forwarded calls);
- fail: it passed with upstream's own module (the control run) and fails with the shim: upstream's assertion
  message and the forwarded call that produced the value (`implementation`; `harness` when the file did not
  even load with the shim);
- not-applicable: it needs something the shim cannot serve, named in `reason` (`unsupported`), or upstream skips
  it at this revision (`upstream`);
- broken: it fails (or does not load) with upstream's own module too (`upstream`).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class Verdict(enum.StrEnum):
    """An upstream test's verdict; the value is what reports write."""

    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not-applicable"
    BROKEN = "broken"


class Outcome(enum.StrEnum):
    """What bun said of one test in one run (its junit report)."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    TODO = "todo"


#: the name of a file's pseudo-test: the file did not load, or failed between tests
FILE_LEVEL = "(file)"


@dataclass
class TestRun:
    """One test in one bun run: `name` is the describe path and the test's name joined with ` > `."""

    file: str
    name: str
    outcome: Outcome
    message: str = ""  # the failure's message (bun's assertion text), or the skip's
    detail: str = ""  # the failure with its stack, as bun printed it
    line: int | None = None
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.file} > {self.name}"


@dataclass
class FileRun:
    """One `bun test FILE` run: its tests in execution order, the calls the shim forwarded and which test made
    each (`calls_by_test`: the index of the test among those bun ran, -1 for calls made outside any test)."""

    file: str
    exit_code: int | None
    seconds: float
    tests: list[TestRun] = field(default_factory=list)
    load_error: str | None = None  # the file did not load, ended early or failed between tests
    output_tail: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    calls_by_test: list[int] = field(default_factory=list)  # parallel to `calls`
    attributed: bool = True  # False: the test markers did not match bun's tests; calls are the file's


@dataclass
class SelectedFile:
    """An upstream test file the run selected, and why (each reason names the module it imports)."""

    path: str
    reasons: list[str]
    imports: list[str] = field(default_factory=list)  # the names it imports from its targets' modules
    targets: list[str] = field(default_factory=list)  # the swap targets that selected it (their shims it runs with)


@dataclass
class TestVerdict:
    file: str
    name: str
    verdict: Verdict
    reason: str = ""
    fault: str = ""  # implementation, harness, upstream or unsupported ("" for a pass)
    message: str = ""  # with the shim: upstream's assertion message
    control_message: str = ""
    call: dict[str, Any] | None = None  # the forwarded call that produced the value
    call_basis: str = ""  # how `call` was chosen (upstream_verdict.producing_call)
    calls: int = 0  # how many calls the test made through the shim
    call_log: list[dict[str, Any]] = field(default_factory=list)  # every forwarded call (kept for failures)

    @property
    def key(self) -> str:
        return f"{self.file} > {self.name}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        return data


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    broken: int = 0
    control_passed: int = 0

    def add(self, other: Counts) -> None:
        for name in ("passed", "failed", "not_applicable", "broken", "control_passed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def line(self) -> str:
        """The run's last line."""
        return (
            f"upstream-tests: {self.passed} passed, {self.failed} failed, {self.not_applicable} not applicable, "
            f"{self.broken} broken (control: {self.control_passed} passed)"
        )


@dataclass
class RevisionResult:
    """One upstream revision under one implementation."""

    repo: str
    rev: str
    commit: str
    version: str | None
    profile: str
    implementation: str
    files: list[SelectedFile] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)  # exports the shims forward (every target's)
    kept: list[str] = field(default_factory=list)  # the swapped modules' exports left to upstream's code
    swaps: list[dict[str, Any]] = field(default_factory=list)  # per target: module, forwarded, kept, files
    packages: dict[str, str] = field(default_factory=dict)  # installed load-time packages, locked versions
    notes: list[str] = field(default_factory=list)  # what the revision could not provide (packages, blobs)
    tests: list[TestVerdict] = field(default_factory=list)
    control_passed: int = 0
    error: str | None = None  # nothing could run (no compiler at the revision, ...)
    timing: dict[str, float] = field(default_factory=dict)  # seconds: prepare, control, shim, total
    implementation_info: dict[str, Any] = field(default_factory=dict)  # the bridge's account of the implementation
    control_runs: list[FileRun] = field(default_factory=list)
    shim_runs: list[FileRun] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.rev}"

    def counts(self) -> Counts:
        by = {verdict: sum(t.verdict == verdict for t in self.tests) for verdict in Verdict}
        return Counts(
            by[Verdict.PASS], by[Verdict.FAIL], by[Verdict.NOT_APPLICABLE], by[Verdict.BROKEN], self.control_passed
        )


@dataclass
class UpstreamRun:
    implementation: str
    revisions: list[RevisionResult] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> Counts:
        total = Counts()
        for revision in self.revisions:
            total.add(revision.counts())
        return total
