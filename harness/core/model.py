"""The records that flow through the harness: cases, repositories, requests, outcomes, verdicts, reports.

Owns the data model and nothing else: dataclasses and the `Status` enum, standard library only,
importing nothing from the project, so every layer (loader, builder, runners, verdicts, reports,
tools, CLI) can use them without cycles, and reading or merging a report loads no runner.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

# --- verdicts ---------------------------------------------------------------------------------------


class Status(enum.StrEnum):
    """A result's verdict. The value is what reports write; `failing` says which ones fail a run."""

    PASS = "pass"
    FAIL = "fail"
    KNOWN = "known-divergence"
    STALE = "stale-divergence"
    ERROR = "error"
    RUNTIME = "runtime-divergence"  # a variant's output differs from bun's for the same release: not the port's doing
    NOT_APPLICABLE = "not-applicable"  # the implementation under test answered `unsupported` (docs/protocol.md)

    @property
    def failing(self) -> bool:
        return self in (Status.FAIL, Status.STALE, Status.ERROR)


#: The count reports keep beside the statuses: scenario files that could not be loaded.
LOAD_ERROR = "load-error"

#: The pseudo-reference of a golden case: the Python port checked against expected bytes stored in the case
#: (quoted from the spec), not against a letta-code release. Reports count its results apart from references.
GOLDEN = "golden"


def is_golden(reference: str) -> bool:
    """Whether a result's reference label is the golden pseudo-reference, not a real reference."""
    return reference == GOLDEN


# --- cases ------------------------------------------------------------------------------------------


class ScenarioError(Exception):
    """A scenario file that cannot be used; the message names the file, the line and the fix."""

    def __init__(self, path: Path, line: int | None, message: str) -> None:
        self.path, self.line = path, line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Divergence:
    references: tuple[str, ...]
    fields: tuple[str, ...]
    kind: str
    reason: str
    link: str | None = None
    source: str = ""  # where it is recorded, when not in the case itself: an expectations file's `path:line`
    broad: bool = False  # an expectations entry naming a rule, tag or case glob: a result it covers may agree
    error: str | None = None  # expects an error of the implementation ("" any, else text its message contains)

    def applies_to(self, reference: str) -> bool:
        return "*" in self.references or reference in self.references


@dataclass(frozen=True)
class Explanation:
    """One `explains` entry: a change of upstream's own output that the case pins (harness.tools.releases.drift)."""

    change: str
    since: str | None = None
    runtime: str | None = None
    locale: str | None = None
    releases: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recorded:
    """One `recorded` entry of a lifecycle case: what real builds (or the spec) were observed to do."""

    targets: tuple[str, ...]  # reference labels, or profile names for golden cases
    source: str
    observations: dict[str, dict[str, Any]]  # step label -> observation -> value


@dataclass(frozen=True)
class ClientSkills:
    """A `client_skills` input as given: any JSON value (`[]`, `null` and non-lists are inputs too).

    Where a case or request has none the field is None, which is not the same as `ClientSkills([])`:
    only a given value is sent to the reference and compared as `systemPromptWithSkills`.
    """

    value: Any


@dataclass(frozen=True)
class FoundBy:
    """How a case `conformance fuzz` or `conformance reduce` wrote diverges: `conformance run <case>
    --reference <reference> --profile <profile>` (and `--impl <implementation>` when one is named) shows
    the divergence again."""

    reference: str
    profile: str
    seed: int | None = None  # the Hypothesis seed of the fuzz batch that drew it (None: not fuzz-found)
    implementation: str | None = None  # the implementation under test when it was not the default one


@dataclass(frozen=True)
class Scenario:
    """A loaded case. `kind` is compile, lifecycle or op (its folder: cases/compile, cases/lifecycle, cases/ops);
    the fields of the other kinds are empty."""

    id: str
    description: str
    path: Path
    tags: tuple[str, ...]
    inputs: dict[str, Any]
    repo: dict[str, Any]  # the case's `repo` mapping as written (its digest names the built repository)
    pins: str = ""
    rules: tuple[str, ...] = ()  # ids of the rules (cases/rules.yaml) this case exercises
    profiles: tuple[str, ...] = ()
    expect: dict[str, Any] | None = None
    divergences: tuple[Divergence, ...] = ()
    explains: tuple[Explanation, ...] = ()
    line: int = 1
    kind: str = "compile"
    steps: tuple[dict[str, Any], ...] = ()
    facts: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    delivery: str = "mid-conversation"
    golden: str | None = None  # lifecycle: the profile a golden case runs the Python port on
    recorded: tuple[Recorded, ...] = ()
    op: str | None = None  # an op case (cases/ops/): the protocol op it sends, and its request fields
    args: dict[str, Any] = field(default_factory=dict)
    found_by: FoundBy | None = None  # written by `conformance fuzz`

    @property
    def runs_port_alone(self) -> bool:
        """Golden cases (spec bytes, or a golden lifecycle probe) run the Python port only."""
        return self.expect is not None or self.golden is not None

    @property
    def client_skills(self) -> ClientSkills | None:
        """`inputs.client_skills` of a compile case, or None when the case does not give it."""
        return ClientSkills(self.inputs["client_skills"]) if "client_skills" in self.inputs else None

    def divergences_for(self, reference: str) -> list[Divergence]:
        return [d for d in self.divergences if d.applies_to(reference)]

    def recorded_targets(self) -> set[str]:
        return {target for entry in self.recorded for target in entry.targets}


# --- requests and outcomes --------------------------------------------------------------------------


@dataclass(frozen=True)
class CompileRequest:
    """One compile: the protocol's `compile` op, with upstream's option names on the wire."""

    memory_dir: Path
    system: str
    agent_id: str
    conversation_id: str
    now: str
    previous_message_count: int | float = 0  # a JS number: 3.0, -5 and 1e21 are all upstream inputs
    include_memfs: bool = True
    client_skills: ClientSkills | None = None  # sent as `clientSkills` only when given
    profile: str | None = None  # the profile an implementation under test is compared under (references ignore it)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "op": "compile",
            "memoryDir": str(self.memory_dir),
            "system": self.system,
            "agentId": self.agent_id,
            "conversationId": self.conversation_id,
            "now": self.now,
            "previousMessageCount": self.previous_message_count,
            "includeMemfs": self.include_memfs,
        }
        if self.client_skills is not None:
            wire["clientSkills"] = self.client_skills.value
        if self.profile is not None:
            wire["profile"] = self.profile
        return wire


@dataclass(frozen=True)
class LifecycleOpen:
    """Start a conversation probe: an agent over `memory_dir`, its first conversation compiled and cached.

    `agent_id` is None for the runner that opens first (the reference), whose store chooses it; the harness
    passes what it chose to the others, since ids are inputs of the compiler. `model` is the case's own
    (None: none named) on every side: each chooses what it stores, and the opened model is compared.
    """

    memory_dir: Path
    storage_dir: Path
    system: str
    now: str
    model: str | None = None
    agent_id: str | None = None
    delivery: str = "mid-conversation"
    profile: str | None = None  # as CompileRequest.profile

    def to_wire(self, session: str) -> dict[str, Any]:
        wire = {
            "op": "lifecycle_open",
            "session": session,
            "memoryDir": str(self.memory_dir),
            "storageDir": str(self.storage_dir),
            "system": self.system,
            "model": self.model,
            "agentId": self.agent_id,
            "delivery": self.delivery,
            "now": self.now,
        }
        return wire if self.profile is None else {**wire, "profile": self.profile}


OutcomeStatus = Literal["ok", "thrown", "error", "unsupported"]


@dataclass
class Outcome:
    """What an implementation produced: a record, an exception upstream threw, a failure to run, or
    `unsupported`: the implementation said it does not serve this request (`error` says what).

    `harness_bug`: an error that is the harness's own: the request could not be written as JSON, so it was
    never sent (harness.runners.wire); the verdict blames the harness, not this side."""

    status: OutcomeStatus
    record: dict[str, Any] | None = None
    thrown: str | None = None
    error: str | None = None  # could not run: crash, hang, garbage; never comparable
    stderr: str = ""
    polluted: bool = False
    harness_bug: bool = False
    elapsed_ms: float = 0.0
    notes: list[str] = field(default_factory=list)
    cache_key: str = ""  # read from the result store under this key (harness.runners.result_store); not in to_json

    def to_json(self) -> dict[str, Any]:
        """The outcome's fields but its store mark; the record is the outcome's own (not a copy: read-only)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "cache_key"}  # (CaseResult.cached)
        return {k: v for k, v in data.items() if v not in (None, "", [], False) or k == "status"}


@dataclass(frozen=True)
class FieldDiff:
    """One differing field (or text): the reference's and the implementation's values, and the first differing
    byte of their UTF-8 encodings.

    A value a side does not have at all is `None` with `*_present` False (null and absent differ).
    """

    field: str
    reference: Any
    impl: Any  # the implementation under test's value
    offset: int | None
    reference_present: bool = True
    impl_present: bool = True


# --- lifecycle replays -----------------------------------------------------------------------------


@dataclass
class StepRow:
    """One step of a replay: what each side observed, and where they differ."""

    index: int
    label: str  # `turn 2`, `commit`, `system`, ...
    impl: dict[str, Any] = field(default_factory=dict)  # the implementation under test's observations
    reference: dict[str, Any] = field(default_factory=dict)
    diffs: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.index,
            "step": self.label,
            "impl": self.impl,
            "reference": self.reference,
            "diffs": self.diffs,
        }


@dataclass
class Replay:
    """A lifecycle probe replayed: one row per step, the texts that differ, or why it could not run."""

    rows: list[StepRow]
    text_diffs: list[FieldDiff]
    error: str | None = None
    stderr: str = ""
    thrown: list[str] = field(default_factory=list)
    unsupported: str | None = None  # the implementation under test does not serve this probe (not applicable)


# --- results and reports ----------------------------------------------------------------------------


#: The implementation under test when none is chosen: the Python port in process.
DEFAULT_IMPLEMENTATION = "python"


@dataclass
class CaseResult:
    case_id: str
    reference: str  # reference label, or `golden` for spec-only cases
    profile: str
    status: Status
    tags: tuple[str, ...]
    path: str
    description: str = ""
    pins: str = ""
    diffs: list[FieldDiff] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    reference_outcome: Outcome | None = None
    impl_outcome: Outcome | None = None
    structured: str = ""
    memory_dir: str = ""
    request: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    turns: list[dict[str, Any]] = field(default_factory=list)  # lifecycle cases: one row per step
    compared: dict[str, str] = field(default_factory=dict)  # field -> how it was compared (verdict.diff.presence)
    baseline: str = ""  # for a runtime/locale variant: the bun reference it was checked against
    runtime_diffs: list[FieldDiff] = field(default_factory=list)  # variant vs baseline (upstream vs upstream)
    implementation: str = DEFAULT_IMPLEMENTATION  # the implementation under test's label (`--impl`)
    cached: str = ""  # the result store's key when the reference's side came from it, not from the reference
    rules: tuple[str, ...] = ()  # the rules (cases/rules.yaml) its case names (Scenario.rules)

    @property
    def failed(self) -> bool:
        return self.status.failing

    @classmethod
    def of_case(
        cls, scenario: Scenario, reference: str, profile: str, status: Status, implementation: str, **rest: Any
    ) -> CaseResult:
        """A result of `scenario`: what every result carries of its case (id, tags, path, description, pins)."""
        return cls(
            scenario.id,
            reference,
            profile,
            status,
            scenario.tags,
            str(scenario.path),
            scenario.description,
            scenario.pins,
            implementation=implementation,
            **rest,
        )


@dataclass
class RunReport:
    """One run's results, its references as described by their runners, and the files that did not load."""

    results: list[CaseResult]
    references: list[dict[str, Any]]
    load_errors: list[ScenarioError]
    command: list[str]
    timing: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # further top-level sections (matrix, drift)

    @property
    def counts(self) -> dict[str, int]:
        counts: Counter[str] = Counter(r.status.value for r in self.results)
        counts[LOAD_ERROR] = len(self.load_errors)
        return {status: counts.get(status, 0) for status in (*(s.value for s in Status), LOAD_ERROR)}

    @property
    def ok(self) -> bool:
        """Every result passed (or is known), something ran, and the run was not interrupted (a partial run)."""
        if self.extra.get("run", {}).get("interrupted"):
            return False
        return not self.load_errors and not any(r.failed for r in self.results) and bool(self.results)
