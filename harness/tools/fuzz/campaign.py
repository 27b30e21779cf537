"""`conformance fuzz`: Hypothesis-generated memory repositories, compiled by the port and the reference.

The strategies are harness.tools.fuzz.strategies'. Batch b (Hypothesis seed seed+b) is generated first
and then compiled as one batch by the oracle (harness.tools.batch_compile: repositories written as git objects,
every compile request sent to the warm reference process at once while the Python port compiles the same
repositories; the next batch is generated in a thread meanwhile, which runs while this one waits for
git and the reference). A batch's first example that diverges in a new way is its finding: shrunk by
Hypothesis (the batch replayed with shrinking: the examples before it come from the oracle's memo), then
by `reduce`, and saved as a case whose `found_by` names the reference, the profile and the seed that
reproduce it. Divergences the corpus already records (cases with `divergences` for one of the session's
references, and cases an earlier fuzz run saved) are counted, not reported.

`seconds` is a wall-clock budget for all of it: when it runs out, shrinking and reducing stop, what was
found is saved as it is then (its description says it is not reduced, or not fully), and fuzz returns.

Inputs no request can carry (a NaN or an infinity anywhere, a clock only Date's fallback parser reads) are
drawn too, one example in twenty, and never compiled: each is `refused`, after checking that the harness
refuses it as it must (`refusal`: the case the fuzzer would save is a load error at the value's line, and a
request with a non-finite number cannot be written as a line). The strings drawn stop at the reference
runtime's Unicode version (`unicode_limit`, from the drivers' `hello`).

`--lifecycle` fuzzes conversations instead (step sequences, harness.tools.fuzz.lifecycle).
"""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky

from harness.cases.inputs import clock_error, non_finite_at
from harness.cases.load import discover, load_scenarios, load_text
from harness.cases.write import case_document, dump_yaml, write_case
from harness.core.model import ScenarioError
from harness.core.repomodel import MODE_FILE, Blob, CommitModel, RepoModel
from harness.run.session import Session
from harness.runners.wire import UnreadableRequest, encode_request
from harness.tools.batch_compile import Candidate, Oracle, OracleStats, candidate_of
from harness.tools.fuzz.repertoire import icu_unicode_version, limit_version, parse_version
from harness.tools.fuzz.strategies import compile_inputs, repo_models
from harness.tools.reduce import Reduction, reduce_candidate, reproduction
from harness.verdict.signature import Signature, pick_divergence


class Divergent(Exception):
    """An example that diverges: raised inside Hypothesis's test function so that it shrinks the example."""

    def __init__(self, candidate: Candidate, signature: Signature) -> None:
        super().__init__(signature.describe())
        self.candidate, self.signature = candidate, signature


class OutOfTime(BaseException):
    """The budget ran out while Hypothesis was shrinking."""


@dataclass
class Finding:
    """A new divergence: its signature, the batch seed that drew it, and the case it was saved as."""

    signature: Signature
    seed: int
    path: Path | None
    summary: str
    reduced: bool = True  # False: saved as found (or part-way), the budget ran out


@dataclass
class FuzzReport:
    """What a fuzz run did: examples, compiles, where the time went, findings and errors."""

    seed: int
    seconds: float = 0.0
    examples: int = 0  # generated repositories compiled by both sides
    compiles: int = 0  # every repository compiled by both sides (with shrinking and reducing)
    compile_seconds: float = 0.0  # time spent building and compiling them
    known: int = 0  # examples that showed an already recorded divergence
    refused: int = 0  # examples whose inputs no request can carry: refused by the loader, not compiled
    unicode: str = ""  # the Unicode version the strings were drawn up to
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stats: OracleStats = field(default_factory=OracleStats)

    @property
    def rate(self) -> float:
        """Repositories built and compiled by both sides per second of doing so."""
        return self.compiles / self.compile_seconds if self.compile_seconds else 0.0

    @property
    def throughput(self) -> float:
        """Generated repositories per second of the whole run (generation, shrinking and reducing included)."""
        return self.examples / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        lines = [
            f"seed {self.seed}, {self.seconds:.1f} s: {self.examples} generated repositories "
            f"({self.throughput:.1f}/s); {self.compiles} repositories built and compiled by both sides in "
            f"{self.compile_seconds:.1f} s ({self.rate:.1f} repos/s)",
            f"new divergences: {len(self.findings)}; examples showing a known divergence: {self.known}; "
            f"inputs refused at load (NaN, infinities, fallback-parser clocks): {self.refused}; "
            f"strings up to Unicode {self.unicode}; errors: {len(self.errors)}",
        ]
        lines += [f"  {f.summary}" for f in self.findings]
        lines += [f"  error: {e}" for e in self.errors[:5]]
        return "\n".join(lines)


def known_signatures(oracle: Oracle, case_dirs: list[Path]) -> set[Signature]:
    """Signatures of corpus cases that record a divergence for one of the session's references, or that an
    earlier fuzz run saved (each compiled once, as one batch)."""
    labels = {ref.label for ref in oracle.session.references}
    files = [p for p in discover([d for d in case_dirs if d.exists()]) if _may_be_known(p)]
    loaded = load_scenarios(files)
    scenarios = [
        s
        for s in loaded.scenarios
        if s.kind == "compile"
        and not s.runs_port_alone
        and ("fuzz" in s.tags or any(d.applies_to(label) for d in s.divergences for label in labels))
    ]
    known: set[Signature] = set()
    answers = oracle.signatures_many([candidate_of(s) for s in scenarios])
    for scenario, signatures in zip(scenarios, answers, strict=True):
        for label, signature in signatures.items():
            if signature is not None and (
                "fuzz" in scenario.tags or any(d.applies_to(label) for d in scenario.divergences)
            ):
                known.add(signature)
    return known


def _may_be_known(path: Path) -> bool:
    """Whether a case file can be fuzz-found or record a divergence (read as text: loading and checking every
    case of the corpus costs seconds; the few that pass are loaded properly, their references read as
    `--reference` reads them, whatever the spelling)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return "fuzz" in text or "divergences" in text


_SETTINGS: dict[str, Any] = dict(
    deadline=None,
    database=None,
    derandomize=False,
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
    print_blob=False,
)


def unicode_limit(session: Session) -> tuple[int, int]:
    """The oldest Unicode version among the session's reference runtimes (`hello`'s info.unicode: bun 1.4.5
    17.0, node 22.19.0 16.0), and never past the repertoire's own (icu4py's ICU)."""
    versions = [icu_unicode_version()]
    for ref in session.references:
        info = ref.runner.describe().get("info")
        found = parse_version(info.get("unicode")) if isinstance(info, dict) else None
        if found is not None:
            versions.append(found)
    return min(versions)


_ONE_FILE = RepoModel([CommitModel({b"system/persona.md": Blob(MODE_FILE, b"I am an agent.\n")})])


def refusal(candidate: Candidate) -> str | None:
    """For inputs no request can carry: None when the harness refuses them as it must, else what went wrong.
    The case the fuzzer would save must be a load error at the value's line (harness.cases.load), and a request
    holding a non-finite number must be unwritable (harness.runners.wire)."""
    # the inputs are what is refused, not the repository
    doc = case_document(
        "fuzz-refused", "inputs no request can carry", _ONE_FILE, tags=["fuzz"], inputs=candidate.inputs
    )
    where = non_finite_at(candidate.inputs, ("inputs",))
    try:
        load_text(dump_yaml(doc), Path("refused") / "compile" / "fuzz-refused.yaml", "compile")
    except ScenarioError as error:
        named = "/".join(map(str, where)) if where is not None else "inputs/now"
        if named not in str(error) or not error.line:
            return f"the loader refused {candidate.inputs!r} without naming {named}: {error}"
    else:
        return f"the loader accepted inputs no request can carry: {candidate.inputs!r}"
    if where is not None:
        try:
            encode_request({"op": "compile", **candidate.inputs})
        except UnreadableRequest:
            return None
        return f"a request line was written for inputs with a non-finite number: {candidate.inputs!r}"
    return None


def is_refused(inputs: dict[str, Any]) -> bool:
    """Whether no request may carry these inputs (the loader refuses them)."""
    now = inputs.get("now")
    return non_finite_at(inputs) is not None or (isinstance(now, str) and clock_error(now) is not None)


def generate(batch_seed: int, count: int, deadline: float) -> list[Candidate]:
    """Hypothesis's first `count` examples for this seed (generation only; none is compiled here)."""
    examples: list[Candidate] = []

    @hypothesis_seed(batch_seed)
    @settings(max_examples=count, phases=[Phase.generate], **_SETTINGS)
    @given(repo_models(), compile_inputs)
    def collect(model: RepoModel, inputs: dict[str, Any]) -> None:
        if time.monotonic() > deadline:
            raise OutOfTime  # else Hypothesis goes on generating the rest of the batch
        if len(examples) < count:
            examples.append(Candidate(model, inputs))

    with contextlib.suppress(OutOfTime):
        collect()
    return examples


def fuzz(
    session: Session,
    *,
    seconds: float = 60.0,
    seed: int = 0,
    out_dir: Path | None = None,
    known: set[Signature] | None = None,
    max_examples: int | None = None,
    batch_size: int = 25,
    reduce_seconds: float = 120.0,
    hypothesis_shrink: bool = True,
) -> FuzzReport:
    """Fuzz until `seconds` pass (or `max_examples` repositories were compiled); batch b runs Hypothesis seed+b.

    `seconds` bounds everything, shrinking, reducing and saving included."""
    oracle = Oracle(session)
    report = FuzzReport(seed)
    seen: set[Signature] = set(known or ())
    started = time.monotonic()
    deadline = started + seconds
    batch = 0
    generator = ThreadPoolExecutor(1, thread_name_prefix="fuzz-generate")
    try:
        session.start()
        limit = unicode_limit(session)
        limit_version(limit)
        report.unicode = f"{limit[0]}.{limit[1]}"
        candidates = _next_batch(seed + batch, batch_size, max_examples, report, deadline)
        while candidates:
            batch_seed = seed + batch
            batch += 1
            submitted = oracle.submit(candidates)  # the reference works on it while the next batch is generated
            # (in a thread: it runs while this one waits for git and for the reference)
            upcoming = generator.submit(
                _next_batch, seed + batch, batch_size, max_examples, report, deadline, len(candidates)
            )
            collected = oracle.collect(submitted)
            following = upcoming.result()
            finding, position = _first_finding(collected, candidates, seen, report)
            candidates = following
            if finding is None:
                continue
            seen.add(finding.signature)
            smallest = finding.candidate
            if hypothesis_shrink:
                smallest = _shrink(oracle, report, finding, batch_seed, position, deadline)
            budget = min(reduce_seconds, deadline - time.monotonic())
            report.findings.append(_save(oracle, finding.signature, smallest, batch_seed, out_dir, budget))
            candidates = [c for c in candidates if time.monotonic() < deadline]
    finally:
        generator.shutdown(wait=True, cancel_futures=True)
        report.seconds = time.monotonic() - started
        report.errors += oracle.errors
        report.compiles, report.compile_seconds, report.stats = oracle.compiles, oracle.compile_seconds, oracle.stats
        oracle.close()
    return report


def _first_finding(
    collected: list[dict[str, Signature | None]], candidates: list[Candidate], seen: set[Signature], report: FuzzReport
) -> tuple[Divergent | None, int]:
    """The batch's first new divergence and its position (1-based; the next run finds the others), or (None, 0);
    counts every example of the batch (both sides compiled it) and the known divergences among them."""
    finding, position = None, 0
    for index, signatures in enumerate(collected, 1):
        found, known_here = pick_divergence(signatures.values(), seen, [])
        report.examples += 1
        report.known += known_here
        if found is not None and finding is None:
            finding, position = Divergent(candidates[index - 1], found), index
    return finding, position


def _next_batch(
    batch_seed: int, batch_size: int, max_examples: int | None, report: FuzzReport, deadline: float, pending: int = 0
) -> list[Candidate]:
    """The next batch's examples: none once the budget or `max_examples` (counting `pending` ones) is spent.
    Examples whose inputs no request can carry are checked (`refusal`) and counted here, not returned."""
    left = batch_size if max_examples is None else min(batch_size, max_examples - report.examples - pending)
    if left <= 0 or time.monotonic() >= deadline:
        return []
    kept = []
    for candidate in generate(batch_seed, left, deadline):
        if not is_refused(candidate.inputs):
            kept.append(candidate)
            continue
        report.refused += 1
        if (problem := refusal(candidate)) is not None:
            report.errors.append(f"seed {batch_seed}: {problem}")
    return kept


def _shrink(
    oracle: Oracle, report: FuzzReport, finding: Divergent, batch_seed: int, position: int, deadline: float
) -> Candidate:
    """The batch replayed with Hypothesis shrinking on: the smallest example that diverges as `finding` does
    (the one found, when the replay does not reach it or the budget runs out first)."""
    best = [finding.candidate]

    @hypothesis_seed(batch_seed)
    @settings(max_examples=position, phases=[Phase.generate, Phase.shrink], **_SETTINGS)
    @given(repo_models(), compile_inputs)
    def check(model: RepoModel, inputs: dict[str, Any]) -> None:
        if time.monotonic() > deadline:
            raise OutOfTime
        candidate = Candidate(model, inputs)
        if is_refused(inputs):
            return  # never compiled (it cannot show the divergence)
        if finding.signature in oracle.signatures(candidate).values():
            best[0] = candidate  # Hypothesis only tries examples it orders before its smallest so far
            raise Divergent(candidate, finding.signature)

    try:
        check()
    except (Divergent, OutOfTime):
        pass
    except Flaky as error:
        report.errors.append(f"seed {batch_seed}: a divergence did not reproduce ({error})")
    return best[0]


def _save(
    oracle: Oracle, signature: Signature, candidate: Candidate, batch_seed: int, out_dir: Path | None, seconds: float
) -> Finding:
    """Reduce what the budget leaves time for, then write the case (with `found_by`)."""
    oracle.reference = signature.reference
    reduction: Reduction | None = None
    if seconds > 0:
        reduction = reduce_candidate(oracle, candidate, seconds=seconds)
        candidate = reduction.candidate
    reduced = reduction is not None and not reduction.notes
    how = (
        "shrunk (Hypothesis, then reduce)"
        if reduced
        else "not fully reduced: the --seconds budget ran out"
        if reduction
        else "not reduced: the --seconds budget ran out (`conformance reduce` it)"
    )
    ref = next(r for r in oracle.session.references if r.label == signature.reference)
    found_by, profiles = reproduction(oracle.session, ref, batch_seed)
    path = None
    if out_dir is not None:
        doc = case_document(
            f"fuzz-{batch_seed}",
            f"Found by `conformance fuzz --seed {batch_seed} --reference {found_by.reference}` and {how}; "
            f"diverges in {signature.describe()}.",
            candidate.model,
            tags=["fuzz", "reduced"] if reduced else ["fuzz"],
            inputs=candidate.inputs,
            found_by=found_by,
            profiles=profiles,
        )
        path = write_case(doc, out_dir, overwrite=True)
    summary = f"seed {batch_seed}: " + (reduction.summary() if reduction else f"{how}; {signature.describe()}")
    return Finding(signature, batch_seed, path, summary, reduced)
