"""`conformance fuzz`: Hypothesis-generated memory repositories, compiled by the port and the reference.

Strategies build repositories the way the corpus's hazards suggest: names from risky alphabets
(quotes, spaces, non-ASCII, control characters, leading and trailing whitespace, `__proto__`-like
names, bytes that are not UTF-8), every frontmatter form, encodings (BOM, CRLF, CR, invalid UTF-8),
symlinks and executables, and several commits; a third of the trees are memfs-v2 and some inputs
give `client_skills` (harness.tools.fuzz_shapes). Every example is compiled by both sides through
one Session (one warm reference process). A new divergence is shrunk by Hypothesis, then by
`reduce`, and saved as a case that names the seed reproducing it. Divergences the corpus already
records (cases with `divergences`, and cases an earlier fuzz run saved) are counted, not reported.

`--lifecycle` fuzzes conversations instead (step sequences, harness.fuzz_lifecycle).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from harness.cases.load import load_scenarios
from harness.cases.write import case_document, write_case
from harness.engine import Session
from harness.model import MODE_EXEC, MODE_FILE, MODE_LINK, Blob, CommitModel, RepoModel
from harness.repo.spec import valid_tree
from harness.tools.fuzz_shapes import client_skills_values, v2_trees
from harness.tools.reduce import Candidate, Oracle, candidate_of, reduce_candidate
from harness.verdict.signature import Signature, pick_divergence

# --- strategies -----------------------------------------------------------------------------------

RISKY_CHARS = (
    "aZb_-. 019"  # plain, with the collation hazards (`_`, case, digits)
    "\"'\\<>&$`{}"  # quoting, XML and replacement-pattern characters
    "éßÄ日🦀"  # non-ASCII (git quotes these names)
    "\t\n\x01\x1c\x7f"  # control characters
    "\u00a0\u0085\u2028\ufeff\u3000"  # whitespace JS and Python trim differently
)
PROTO_NAMES = ("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__value__", "prototype")
WORD_NAMES = ("persona", "human", "Zeta", "alpha", "_under", "1", "01", "10", "MEMORY", "SKILL", "a", "A", "é")
RAW_NAMES = (b"\xff", b"caf\xe9", b"\xc3", b"a\xffb")  # not UTF-8
ROOTS = ("system",) * 6 + ("",) * 3 + ("notes", "skills", "system/persona")
EXTENSIONS = (".md", ".md", ".md", ".md", ".MD", ".md ", " .md", ".txt", "")
WHITESPACE = ("", " ", "\t", "\u00a0", "\ufeff", "\u0085", "\x1c", "\u2028", "\n", "\r")

_words = st.sampled_from(WORD_NAMES)
_risky_text = st.text(alphabet=st.sampled_from(RISKY_CHARS), min_size=1, max_size=6)
_padded = st.builds(lambda a, s, b: a + s + b, st.sampled_from(WHITESPACE), _words, st.sampled_from(WHITESPACE))


def _component_ok(part: bytes) -> bool:
    return part not in (b"", b".", b"..") and part.lower() != b".git" and b"/" not in part and b"\0" not in part


_plain_text = st.text(alphabet=st.sampled_from("aAbBzZ_-. 019"), min_size=1, max_size=6)

# Mostly names git prints unquoted (they reach the renderer), with risky ones often enough to matter.
# Prototype names are rarer: upstream pollutes Object.prototype with them and the reference process
# restarts (about a second) after each such repository.
_name_kind = st.integers(0, 23)


@st.composite
def name_components(draw: st.DrawFn) -> bytes:
    kind = draw(_name_kind)
    if kind < 7:
        part = draw(_words)
    elif kind < 14:
        part = draw(_plain_text)
    elif kind < 18:
        part = draw(_padded)
    elif kind < 22:
        part = draw(_risky_text)
    elif kind < 23:
        return draw(st.sampled_from(RAW_NAMES))
    else:
        part = draw(st.sampled_from(PROTO_NAMES))
    encoded = part.encode("utf-8")
    return encoded if _component_ok(encoded) else b"x"


@st.composite
def paths(draw: st.DrawFn) -> bytes:
    root = draw(st.sampled_from(ROOTS)).encode()
    dirs = draw(st.lists(name_components(), max_size=2))
    leaf = draw(name_components()) + draw(st.sampled_from(EXTENSIONS)).encode()
    parts = [p for p in root.split(b"/") if p] + dirs + [leaf]
    return b"/".join(parts)


_text_chars = st.sampled_from(RISKY_CHARS + "abc xyz:-|>#\n\n\n")
short_text = st.text(alphabet=_text_chars, max_size=24)
FRAGMENTS = ("$&", "$$", "$`", "$'", "{CORE_MEMORY}", "</memory>", "<persona>", "---", "description: x", "  ", "\n\n")

descriptions = st.one_of(
    st.text(alphabet=st.sampled_from(RISKY_CHARS.replace("\n", "") + "abc :#|>"), max_size=16),
    st.sampled_from(("", "|", ">", "|-", "'quoted'", '"dq"', "[a, b]", "null", "1", "x: y", "#c")),
)


@st.composite
def frontmatters(draw: st.DrawFn) -> str:
    description = draw(descriptions)
    form = draw(st.integers(0, 8))
    if form == 0:
        return ""
    if form == 1:
        return f"---\ndescription: {description}\n---\n"
    if form == 2:
        return f"---\ndescription: |\n  {description}\n  second line\n---\n"
    if form == 3:
        return f"---\ndescription: >-\n  {description}\n\n  folded\n---\n"
    if form == 4:
        return "---\n---\n"
    if form == 5:
        return f"---\ndescription: {description}\n"  # never closed
    if form == 6:
        return f"---\nname: n\n  indented: {description}\ndescription:\n  - {description}\n---\n"
    if form == 7:
        return f"--- \ndescription: {description}\n---"  # fence variants, no newline after the close
    key = draw(st.sampled_from(("name", "__proto__", "constructor", "limit", "description")))
    return f"---\n{key}: {description}\ndescription: {description}\n---\n"


@st.composite
def bodies(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.one_of(short_text, st.sampled_from(FRAGMENTS)), max_size=4))
    return draw(st.sampled_from(WHITESPACE)) + "".join(pieces) + draw(st.sampled_from(WHITESPACE))


@st.composite
def blobs(draw: st.DrawFn) -> Blob:
    kind = draw(st.integers(0, 19))
    if kind == 0:
        return Blob(MODE_LINK, draw(st.sampled_from((b"../x", b"system/a.md", b"persona.md", b"\xff", b"nowhere"))))
    data = (draw(frontmatters()) + draw(bodies())).encode("utf-8")
    encoding = draw(st.sampled_from(("utf-8",) * 6 + ("bom", "crlf", "bom-crlf", "cr", "invalid", "nul")))
    if "crlf" in encoding:
        data = data.replace(b"\n", b"\r\n")
    if encoding == "cr":
        data = data.replace(b"\n", b"\r")
    if encoding.startswith("bom"):
        data = b"\xef\xbb\xbf" + data
    if encoding in ("invalid", "nul"):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + (b"\xff\xc3" if encoding == "invalid" else b"\0") + data[at:]
    return Blob(MODE_EXEC if kind == 1 else MODE_FILE, data)


def _tree_of(entries: dict[bytes, Blob]) -> dict[bytes, Blob]:
    """Drop entries until git can hold the tree (no name that is both a file and a directory)."""
    tree: dict[bytes, Blob] = {}
    for name in sorted(entries, key=len):
        candidate = {**tree, name: entries[name]}
        if valid_tree(candidate):
            tree = candidate
    return tree


v1_trees = st.dictionaries(paths(), blobs(), min_size=1, max_size=6).map(_tree_of)
# One tree in three is memfs-v2 (a root MEMORY.md); a repository's commits mix both, so it may switch.
trees = st.one_of(v1_trees, v1_trees, v2_trees(blobs(), name_components()).map(_tree_of))


@st.composite
def repo_models(draw: st.DrawFn) -> RepoModel:
    commits = [CommitModel(draw(trees))]
    for _ in range(draw(st.integers(0, 2))):  # later commits: keep some files, change or add others
        previous = commits[-1].files
        kept = {n: b for n, b in previous.items() if draw(st.booleans())}
        commits.append(CommitModel(_tree_of({**kept, **draw(trees)})))
    return RepoModel(commits)


SYSTEM_PROMPTS = ("S $& $$ {CORE_MEMORY}", "no placeholder \u00a0\n", "{CORE_MEMORY}{CORE_MEMORY}")
compile_inputs: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}),
    st.just({}),
    st.just({}),
    st.fixed_dictionaries({"system": st.sampled_from(SYSTEM_PROMPTS)}),
    st.fixed_dictionaries(
        {"agent_id": st.sampled_from(("a$&b", "agent-<x>")), "previous_message_count": st.integers(0, 3)}
    ),
    st.fixed_dictionaries({"client_skills": client_skills_values}),
    st.fixed_dictionaries({"client_skills": client_skills_values, "system": st.sampled_from(SYSTEM_PROMPTS)}),
)


# --- the loop -------------------------------------------------------------------------------------


class Divergent(Exception):
    def __init__(self, candidate: Candidate, signature: Signature) -> None:
        super().__init__(signature.describe())
        self.candidate, self.signature = candidate, signature


@dataclass
class Finding:
    signature: Signature
    seed: int
    path: Path | None
    summary: str


@dataclass
class FuzzReport:
    seed: int
    seconds: float = 0.0
    examples: int = 0  # generated repositories compiled by both sides
    compiles: int = 0  # every repository compiled by both sides (with shrinking and reducing)
    compile_seconds: float = 0.0  # time spent building and compiling them
    known: int = 0  # examples that showed an already recorded divergence
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Repositories built and compiled by both sides per second of doing so."""
        return self.compiles / self.compile_seconds if self.compile_seconds else 0.0

    def summary(self) -> str:
        lines = [
            f"seed {self.seed}, {self.seconds:.1f} s: {self.examples} generated repositories; "
            f"{self.compiles} repositories built and compiled by both sides in {self.compile_seconds:.1f} s "
            f"({self.rate:.1f} repos/s)",
            f"new divergences: {len(self.findings)}; examples showing a known divergence: {self.known}; "
            f"errors: {len(self.errors)}",
        ]
        lines += [f"  {f.summary}" for f in self.findings]
        lines += [f"  error: {e}" for e in self.errors[:5]]
        return "\n".join(lines)


def known_signatures(oracle: Oracle, case_dirs: list[Path]) -> set[Signature]:
    """Signatures of corpus cases that record a divergence, or that an earlier fuzz run saved."""
    known: set[Signature] = set()
    loaded = load_scenarios([d for d in case_dirs if d.exists()])
    for scenario in loaded.scenarios:
        if scenario.kind != "compile" or not (scenario.divergences or "fuzz" in scenario.tags):
            continue
        for label, signature in oracle.signatures(candidate_of(scenario)).items():
            if signature is not None and (
                "fuzz" in scenario.tags or any(d.applies_to(label) for d in scenario.divergences)
            ):
                known.add(signature)
    return known


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
    """Fuzz until `seconds` pass (or `max_examples` repositories were compiled); batch b runs Hypothesis seed+b."""
    oracle = Oracle(session)
    report = FuzzReport(seed)
    seen: set[Signature] = set(known or ())
    started = time.monotonic()
    deadline = started + seconds
    batch = 0
    try:
        session.start()
        while time.monotonic() < deadline and (max_examples is None or report.examples < max_examples):
            batch_seed = seed + batch
            finding = _run_batch(
                oracle, report, seen, batch_seed, deadline, max_examples, batch_size, hypothesis_shrink
            )
            batch += 1
            if finding is None:
                continue
            seen.add(finding.signature)
            reduction = reduce_candidate(
                _oracle_for(oracle, finding.signature), finding.candidate, seconds=reduce_seconds
            )
            path = None
            if out_dir is not None:
                doc = case_document(
                    f"fuzz-{batch_seed}",
                    f"Found by `conformance fuzz --seed {batch_seed}` and shrunk (Hypothesis, then reduce); "
                    f"diverges in {finding.signature.describe()}.",
                    reduction.candidate.model,
                    tags=["fuzz", "reduced"],
                    inputs=reduction.candidate.inputs,
                )
                path = write_case(doc, out_dir, overwrite=True)
            summary = f"seed {batch_seed}: {reduction.summary()}"
            report.findings.append(Finding(finding.signature, batch_seed, path, summary))
    finally:
        report.seconds = time.monotonic() - started
        report.errors += oracle.errors
        report.compiles, report.compile_seconds = oracle.compiles, oracle.compile_seconds
        oracle.close()
    return report


def _oracle_for(oracle: Oracle, signature: Signature) -> Oracle:
    oracle.reference = signature.reference
    oracle.memo.clear()
    return oracle


def _run_batch(
    oracle: Oracle,
    report: FuzzReport,
    seen: set[Signature],
    batch_seed: int,
    deadline: float,
    max_examples: int | None,
    batch_size: int,
    shrink: bool,
) -> Divergent | None:
    target: list[Signature] = []

    @hypothesis_seed(batch_seed)
    @settings(
        max_examples=batch_size,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate, Phase.shrink] if shrink else [Phase.generate],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(repo_models(), compile_inputs)
    def check(model: RepoModel, inputs: dict[str, Any]) -> None:
        shrinking = bool(target)
        if not shrinking and (
            time.monotonic() > deadline or (max_examples is not None and report.examples >= max_examples)
        ):
            return
        candidate = Candidate(model, inputs)
        oracle.reference = None
        signatures = oracle.signatures(candidate)
        found, known = pick_divergence(signatures.values(), seen, target)
        if not shrinking:
            report.examples += 1
            report.known += known
        if found is not None:
            raise Divergent(candidate, found)

    try:
        check()
    except Divergent as found:
        return found
    except Flaky as error:
        report.errors.append(f"seed {batch_seed}: a divergence did not reproduce ({error})")
    return None
