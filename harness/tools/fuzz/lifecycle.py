"""Lifecycle step-sequence fuzzing: Hypothesis-generated conversations replayed on both sides.

A generated lifecycle scenario starts from a small committed repository and runs 1 to 7 steps:
user turns, memory commits (which add, change or delete files that may carry a fact), raw system
prompt edits, model switches (including the one model 0.30.28 to 0.32.8 send `<memory_update>`
for), new conversations, explicit recompiles and clock moves (to Invalid Dates too: upstream throws at
the next turn that formats the clock). Turns may carry `client_skills` whose names come from Unicode's
assigned repertoire (harness.tools.fuzz.repertoire) and hold odd numbers or, rarely, an infinity. A step
list the loader refuses (a NaN or infinity, a clock only Date's fallback parser reads) is counted as
refused after checking that the loader names the step's line; it is never replayed. Each one is replayed by
`Session.run_case` (upstream's real turn loop with a recording executor, and
`memfs_prompt.conversation`), and a divergence is a step observation that differs. Hypothesis
shrinks the step list; the result is saved under `cases/lifecycle/` with the seed that finds it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from harness.cases.inputs import clock_error, non_finite_at
from harness.cases.load import load_scenarios, load_text
from harness.cases.write import dump_yaml
from harness.core.model import Scenario, ScenarioError, Status
from harness.run.session import Session
from harness.tools.fuzz.campaign import unicode_limit
from harness.tools.fuzz.record import Found, SessionRecord, batch_settings, run_batches, save_finding
from harness.tools.fuzz.repertoire import limit_version
from harness.tools.fuzz.shapes import NON_FINITE, client_skills_values
from harness.verdict.signature import Signature, pick_divergence

FACTS = {"tea": "The user likes tea.", "teal": "favourite colour is teal"}
MODELS = ("anthropic/claude-opus-4-8", "openai/gpt-5.5", "anthropic/claude-sonnet-4-5")
PATHS = ("system/human.md", "system/persona.md", "system/notes/deep.md", "notes/outside.md", "system/Zeta.md")
START = {
    "commits": [
        {
            "message": "init",
            "files": {
                "system/persona.md": "---\ndescription: who I am\n---\nI am a helpful agent.\n",
                "system/human.md": "---\ndescription: the user\n---\nNothing yet.\n",
            },
        }
    ]
}

_texts = st.sampled_from((*FACTS.values(), "Nothing.", "", "  padded  \n", "$& and {CORE_MEMORY}"))
_frontmatters = st.sampled_from(("", "---\ndescription: d\n---\n", "---\ndescription: |\n  block\n---\n"))
_bodies = st.builds(lambda fm, text: fm + text + "\n", _frontmatters, _texts)


# Invalid Dates (a turn that formats the clock throws on both sides), and forms only Date's fallback parser
# reads (the loader refuses them: such a step list is refused, not replayed)
INVALID_CLOCKS = (
    "2026-13-01T00:00:00Z",
    "2026-01-01T24:01:00Z",
    "+275761-01-01T00:00:00Z",
    "2026-01-32T00:00Z",
    "Jan 2 2026",
    "2026/01/02",
)
REFUSED_STEPS = tuple({"turn": "hello", "client_skills": [{"name": "x", "description": v}]} for v in NON_FINITE)


@st.composite
def commit_steps(draw: st.DrawFn) -> dict[str, Any]:
    files = draw(st.dictionaries(st.sampled_from(PATHS), _bodies, max_size=2))
    delete = draw(st.lists(st.sampled_from(PATHS), max_size=1, unique=True))
    commit: dict[str, Any] = {"message": "fuzz commit"}
    if delete:
        commit["delete"] = [p for p in delete if p not in files]
    if files:
        commit["files"] = files
    return {"commit": commit}


steps = st.one_of(
    st.builds(lambda text: {"turn": text}, st.sampled_from(("hello", "what do I like?", "again"))),
    st.builds(lambda text: {"turn": text}, st.sampled_from(("hello", "more"))),
    commit_steps(),
    commit_steps(),
    st.builds(
        lambda text: {"system": text},
        st.sampled_from(
            ("You are an agent.\n\n{CORE_MEMORY}", "New prompt {CORE_MEMORY} $&", "No placeholder at all  ")
        ),
    ),
    st.builds(lambda model: {"model": model}, st.sampled_from(MODELS)),
    st.just({"new_conversation": True}),
    st.just({"recompile": True}),
    st.builds(lambda when: {"clock": when}, st.sampled_from(("2026-01-02T03:05:00.000Z", "2026-06-30T23:59:59.999Z"))),
    st.builds(lambda when: {"clock": when}, st.sampled_from(INVALID_CLOCKS)),
    st.builds(
        lambda text, skills: {"turn": text, "client_skills": skills},
        st.sampled_from(("hello", "more")),
        client_skills_values,
    ),
)


def _existing_deletes(body: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each commit step deletes only files there at that step (a case may not delete a missing path)."""
    present = set(START["commits"][0]["files"])
    out = []
    for step in body:
        if "commit" in step:
            commit = dict(step["commit"])
            kept = [p for p in commit.pop("delete", []) if p in present]
            if kept:
                commit["delete"] = kept
            present = (present - set(kept)) | set(commit.get("files", {}))
            step = {"commit": commit}
        out.append(step)
    return out


_one_in_thirty = st.integers(0, 29)
_refused_steps = st.sampled_from(REFUSED_STEPS)


def is_refused(doc: dict[str, Any]) -> bool:
    """Whether the loader refuses a generated document's steps (a NaN or infinity, a fallback-parser clock)."""
    steps = doc["steps"]
    return non_finite_at(steps) is not None or any("clock" in s and clock_error(s["clock"]) for s in steps)


@st.composite
def lifecycle_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A lifecycle case mapping (without id and description): start repo, facts, model, steps."""
    body = _existing_deletes(draw(st.lists(steps, min_size=1, max_size=6)))
    if draw(_one_in_thirty) == 15:
        body.append(draw(_refused_steps))
    if not any("turn" in step for step in body):
        body.append({"turn": "hello"})
    doc: dict[str, Any] = {"repo": START, "facts": FACTS, "steps": body}
    model = draw(st.sampled_from((None, *MODELS)))
    if model:
        doc["model"] = model
    return doc


def lifecycle_scenario(doc: dict[str, Any], case_id: str, workdir: Path) -> Scenario:
    """The case a generated document stands for, read by the loader (so it obeys every case rule)."""
    full = {"id": case_id, "description": "generated lifecycle probe", "tags": ["lifecycle", "fuzz"], **doc}
    return load_text(dump_yaml(full), workdir / "lifecycle" / f"{case_id}.yaml", "lifecycle")


def refusal(doc: dict[str, Any], workdir: Path) -> str | None:
    """None when the loader refuses a refused document at one of its steps' lines, else what went wrong."""
    try:
        lifecycle_scenario(doc, "refused", workdir)
    except ScenarioError as error:
        return None if error.line and "steps/" in str(error) else f"refused without naming a step's line: {error}"
    return f"the loader accepted steps no request can carry: {doc['steps']!r}"


def lifecycle_document(scenario: Scenario) -> dict[str, Any]:
    """A lifecycle case's repository, facts, model and steps, as lifecycle_documents draws them."""
    doc: dict[str, Any] = {"repo": scenario.repo, "facts": dict(scenario.facts), "steps": list(scenario.steps)}
    if scenario.model:
        doc["model"] = scenario.model
    if scenario.golden:
        doc["golden"], doc["delivery"] = {"profile": scenario.golden}, scenario.delivery
    return doc


def lifecycle_signatures(
    session: Session, doc: dict[str, Any], workdir: Path
) -> tuple[dict[str, Signature], list[str]]:
    """Per reference: the (step kind, observation) pairs that differ; and errors."""
    signatures: dict[str, Signature] = {}
    errors: list[str] = []
    for result in session.run_case(lifecycle_scenario(doc, "candidate", workdir)):
        if result.status == Status.ERROR:
            errors.append(f"[{result.reference}] " + "; ".join(result.reasons))
            continue
        pairs = {
            (row["step"].split(" ")[0], d["observation"])
            for row in result.turns
            for d in row["diffs"]
            if ":" not in d["observation"]  # per-fact observations follow from the text hashes; facts vary
        }
        if pairs:
            signatures[result.reference] = Signature(result.reference, tuple(sorted(pairs)))
    return signatures, errors


def known_lifecycle_signatures(session: Session, case_dirs: list[Path]) -> set[Signature]:
    """Signatures of lifecycle cases an earlier fuzz run saved, or that record divergences."""
    known: set[Signature] = set()
    with tempfile.TemporaryDirectory(prefix="letta-lfuzz-known-") as tmp:
        for scenario in load_scenarios([d for d in case_dirs if d.exists()]).scenarios:
            if scenario.kind == "lifecycle" and ("fuzz" in scenario.tags or scenario.divergences):
                doc = lifecycle_document(scenario)
                known |= set(lifecycle_signatures(session, doc, Path(tmp))[0].values())
    return known


def fuzz_lifecycle(
    session: Session,
    *,
    seconds: float,
    seed: int = 0,
    out_dir: Path | None = None,
    known: set[Signature] | None = None,
    batch_size: int = 10,
    max_replays: int | None = None,
) -> SessionRecord:
    """Replay generated step sequences until `seconds` pass; batch b runs Hypothesis seed+b. Skipped examples are
    step lists the loader refuses (never replayed)."""
    record = SessionRecord("lifecycle", "step sequences replayed by both sides", "refused at load", seed)
    limit_version(unicode_limit(session))
    with tempfile.TemporaryDirectory(prefix="letta-lfuzz-") as tmp:

        def batch(batch_seed: int, seen: set[Signature], stop: Callable[[], bool]) -> Found | None:
            return _batch(session, record, seen, Path(tmp), (batch_seed, batch_size), stop)

        def save(found: Found, batch_seed: int) -> Path | None:
            if out_dir is None:
                return None

            def describe(reference: str) -> str:
                return (
                    f"Found by `conformance fuzz --lifecycle --seed {batch_seed}`, "
                    f"shrunk by Hypothesis; differs in {found.signature.describe()}."
                )

            case_id = f"fuzz-lifecycle-{batch_seed}"
            return save_finding(session, found, out_dir, case_id, describe, ["lifecycle", "fuzz"], batch_seed)

        return run_batches(record, batch, save, seconds=seconds, known=known, max_runs=max_replays)


def _batch(
    session: Session,
    record: SessionRecord,
    seen: set[Signature],
    workdir: Path,
    which: tuple[int, int],
    stop: Callable[[], bool],
) -> Found | None:
    """One Hypothesis run of `batch_size` step lists (generate, then shrink the first new divergence)."""
    batch_seed, batch_size = which
    target: list[Signature] = []

    @batch_settings(batch_seed, batch_size)
    @given(lifecycle_documents())
    def check(doc: dict[str, Any]) -> None:
        if not target and stop():
            return
        if is_refused(doc):
            if not target:
                record.skipped += 1
                if (problem := refusal(doc, workdir)) is not None:
                    record.errors.append(f"seed {batch_seed}: {problem}")
            return
        signatures, errors = lifecycle_signatures(session, doc, workdir)
        shrinking = bool(target)
        found, known = pick_divergence(signatures.values(), seen, target)
        if not shrinking:
            record.count(errors, known)
        if found is not None:
            raise Found(doc, found)

    try:
        check()
    except Found as found:
        return found
    return None
