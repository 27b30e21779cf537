"""`reduce` and `fuzz` against a deliberately broken port.

The "reference" here is the Python port with its correct profile, run as a second runner, so the
tests need neither bun nor a release and stay fast; the port under test is the same code with one
quirk broken inside the test (labels sorted by code point instead of ICU collation, or Python's
`str.strip` instead of JS `trim`). What must come out: fuzz finds the divergence, reduce shrinks it
to a couple of files that still diverge the same way, and the saved case fails against the broken
port and passes against the correct one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

import memfs_prompt.compiler as compiler
import memfs_prompt.frontmatter as frontmatter
import memfs_prompt.render_v1 as render_v1
from harness.cases.load import load_scenario
from harness.cases.write import model_size
from harness.core.model import CompileRequest, FoundBy, LifecycleOpen, Outcome, Status
from harness.core.reference import ReferenceSpec
from harness.core.repomodel import MODE_FILE, MODE_GITLINK, Blob, CommitModel, RepoModel
from harness.run.session import Session
from harness.runners.python_port import PythonPortRunner
from harness.tools.fuzz.campaign import fuzz, known_signatures
from harness.tools.fuzz.lifecycle import fuzz_lifecycle
from harness.tools.reduce import Candidate, Oracle, Reducer, candidate_of, ddmin, reduce_candidate, reduced_document
from harness.verdict.signature import Signature, difference_kind
from memfs_prompt.profiles import Profile, profile_for_release

RELEASE = "0.32.18"


def codepoint_key(value: str) -> tuple[int, ...]:
    return tuple(map(ord, value))


@contextlib.contextmanager
def broken_sort() -> Iterator[None]:
    with (
        mock.patch.object(compiler, "locale_compare_key", codepoint_key),
        mock.patch.object(render_v1, "locale_compare_key", codepoint_key),
    ):
        yield


@contextlib.contextmanager
def broken_trim() -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for module in (compiler, frontmatter, render_v1):
            stack.enter_context(mock.patch.object(module, "js_trim", str.strip))
        yield


class BrokenPort(PythonPortRunner):
    """The port with one quirk broken while it compiles (the reference runner is left alone)."""

    def __init__(
        self, profile: Profile, env: dict[str, str] | None, breakage: Callable[[], AbstractContextManager[None]]
    ) -> None:
        super().__init__(profile, env)
        self.breakage = breakage

    def compile(self, request: CompileRequest) -> Outcome:
        with self.breakage():
            return super().compile(request)

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        with self.breakage():
            return super().lifecycle_open(request)

    def lifecycle_step(self, step: dict[str, Any]) -> Outcome:
        with self.breakage():
            return super().lifecycle_step(step)


def python_reference_session(tmp_path: Path, breakage=None, name: str = "python-correct") -> Session:
    """Reference: the correct Python profile for RELEASE, labelled by `name`. Port: broken by `breakage` (or not)."""
    reference = PythonPortRunner(profile_for_release(RELEASE))
    reference.name = name
    impl_factory = (lambda impl, profile, context: BrokenPort(profile, context.git_env, breakage)) if breakage else None
    return Session(
        [ReferenceSpec("npm", RELEASE)],
        cache=tmp_path / "cache",
        runner_factory=lambda spec, cache: reference,
        impl_factory=impl_factory,
    )


def write_yaml(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


# --- ddmin and signatures --------------------------------------------------------------------------


def test_ddmin_finds_the_two_items_a_failure_needs() -> None:
    calls = []

    def needs_3_and_7(items: list[int]) -> bool:
        calls.append(items)
        return 3 in items and 7 in items

    assert ddmin(list(range(20)), needs_3_and_7) == [3, 7]
    assert ddmin([1, 2], lambda items: True) == []


@pytest.mark.parametrize(
    ("reference", "port", "kind"),
    [
        ("<a/>\n<Z/>", "<Z/>\n<a/>", "order"),
        ("x\x1c", "x", "whitespace"),
        ("abc", "ab", "impl-shorter"),
        ("ab", "abc", "impl-longer"),
        ("abc", "abd", "text"),
        (None, "x", "null-in-reference"),  # a null the reference has; absence is FieldDiff's *_present
        ("x", None, "null-in-impl"),
    ],
)
def test_difference_kinds(reference, port, kind) -> None:
    assert difference_kind(reference, port) == kind


# --- reduce ----------------------------------------------------------------------------------------


def test_reduce_shrinks_a_whitespace_divergence_to_one_small_file(tmp_path: Path) -> None:
    files = {f"system/note{i}.md": f"---\ndescription: note {i}\n---\nline one\nline two {i}\n" for i in range(10)}
    files["system/deep/culprit.md"] = "---\ndescription: has a separator\n---\nbody text\nmore body\x1c\n"
    files["notes/other.md"] = "other\n"
    case = write_yaml(
        tmp_path / "cases" / "compile" / "trimmed.yaml",
        {
            "id": "trimmed",
            "description": "d",
            "tags": ["whitespace"],
            "repo": {"commits": [{"files": {"system/old.md": "old\n"}}, {"files": files}]},
        },
    )
    scenario = load_scenario(case)
    with python_reference_session(tmp_path, broken_trim) as session:
        oracle = Oracle(session)
        reduction = reduce_candidate(oracle, candidate_of(scenario))
        oracle.close()
    assert reduction.target == Signature("python-correct", (("content", "whitespace"), ("coreMemory", "whitespace")))
    files_after, bytes_after, commits_after = reduction.after
    assert (files_after, commits_after) == (1, 1)
    assert bytes_after <= 12  # upstream trims the body only after a frontmatter: `---\n\n---\n\x1c` (10 bytes)
    assert model_size(candidate_of(scenario).model)[0] == 13
    assert b"\x1c" in next(iter(reduction.candidate.model.head.values())).data
    doc = reduced_document(reduction, "trimmed-reduced", "trimmed", FoundBy(f"npm:{RELEASE}", "letta-code@0.32.14"))
    assert doc["tags"] == ["reduced"]  # the original's `whitespace` said something of files that are gone
    assert doc["found_by"] == {"reference": f"npm:{RELEASE}", "profile": "letta-code@0.32.14"}


def test_reduce_command_rejects_a_case_that_does_not_diverge(tmp_path: Path, capsys) -> None:
    from harness.tools import reduce as reduce_module

    calm = {"id": "calm", "description": "d", "repo": {"commits": [{"files": {"a.md": "a\n"}}]}}
    case = write_yaml(tmp_path / "compile" / "calm.yaml", calm)
    with python_reference_session(tmp_path) as session:
        oracle = Oracle(session)
        with pytest.raises(ValueError, match="does not diverge"):
            reduce_candidate(oracle, candidate_of(load_scenario(case)))
        oracle.close()
    assert reduce_module.ddmin([], lambda items: False) == []


# --- fuzz ------------------------------------------------------------------------------------------


def test_fuzz_finds_a_broken_sort_and_saves_a_small_case_that_fails_the_same_way(tmp_path: Path) -> None:
    out = tmp_path / "found" / "compile"
    with python_reference_session(tmp_path, broken_sort) as session:
        # Which batch of 25 examples first hits the bug depends on the Hypothesis version: try seeds in turn.
        order = (("content", "order"), ("coreMemory", "order"))
        for seed in range(16):
            report = fuzz(session, seconds=300, seed=seed, out_dir=out, max_examples=25, hypothesis_shrink=False)
            assert len(report.findings) <= 1, report.summary()  # a batch stops at its first divergence
            if report.findings and report.findings[0].signature.diffs == order:
                break
        assert report.findings, report.summary()
        finding = report.findings[0]
        assert finding.signature.diffs == order
        saved = load_scenario(finding.path)
        assert saved.id == f"fuzz-{finding.seed}" and "fuzz" in saved.tags
        assert f"--seed {finding.seed}" in saved.description
        files, _, commits = model_size(candidate_of(saved).model)
        assert 2 <= files <= 3 and commits == 1
        [result] = session.run_case(saved)
        assert result.status == Status.FAIL
    with python_reference_session(tmp_path / "fixed") as correct:
        assert [r.status for r in correct.run_case(saved)] == [Status.PASS]

    # Fuzzing again with the saved case in the corpus: the divergence is known, not reported again.
    with python_reference_session(tmp_path / "again", broken_sort) as session:
        oracle = Oracle(session)
        known = known_signatures(oracle, [out])
        oracle.close()
        assert finding.signature in known
        # Same seed, same examples: the run reaches the example that diverged the first time.
        again = fuzz(
            session, seconds=300, seed=seed, out_dir=out, known=known, max_examples=25, hypothesis_shrink=False
        )
    assert again.findings == [] and again.known >= 1, again.summary()


# --- the real reference ----------------------------------------------------------------------------


@pytest.mark.integration
def test_reduce_with_the_real_reference_shrinks_a_profile_difference(
    tmp_path: Path, reference_bun, release_bundle, capsys
) -> None:
    """letta-code 0.32.18 reads YAML block scalars; the 0.31.12 profile does not: reduce keeps that difference."""
    from harness.cli.main import main as conformance

    release_bundle(RELEASE)
    files = {f"system/plain{i}.md": f"---\ndescription: plain {i}\n---\nbody {i}\n" for i in range(4)}
    files["system/block.md"] = "---\ndescription: |\n  line one\n  line two\nname: x\n---\nbody\n"
    found_by = {"reference": "pypi:0.34.12", "profile": "letta-code@0.33.6", "seed": 42}
    case = write_yaml(
        tmp_path / "compile" / "block.yaml",
        {"id": "block", "description": "d", "repo": {"commits": [{"files": files}]}, "found_by": found_by},
    )
    argv = [
        "reduce",
        str(case),
        "--reference",
        f"npm:{RELEASE}",
        "--profile",
        "letta-code@0.31.12",
        "--budget",
        "600",
        "--out",
        str(tmp_path / "compile"),
    ]
    assert conformance(argv) == 0
    assert "files 5 -> 1" in capsys.readouterr().out
    reduced = load_scenario(tmp_path / "compile" / "block-reduced.yaml")
    [blob] = candidate_of(reduced).model.head.values()
    assert b"description:" in blob.data and b"|" in blob.data and len(blob.data) <= 40
    assert "against 0.32.18" in reduced.description and "letta-code@0.31.12" in reduced.description
    # what reproduces the reduced case: the reference and profile it was reduced against, the fuzz seed kept
    assert reduced.found_by == FoundBy(f"npm:{RELEASE}", "letta-code@0.31.12", 42)


# --- lifecycle step sequences ----------------------------------------------------------------------


def test_lifecycle_fuzz_finds_a_port_that_never_sends_memory_updates(tmp_path: Path) -> None:
    """0.32.18 sends `<memory_update>` after a commit; a port that recompiles instead differs at the next turn."""
    from memfs_prompt.conversation import LocalConversations

    @contextlib.contextmanager
    def no_updates() -> Iterator[None]:
        with mock.patch.object(LocalConversations, "_sends_updates", lambda self: False):
            yield

    out = tmp_path / "lifecycle"
    with python_reference_session(tmp_path, no_updates) as session:
        report = fuzz_lifecycle(session, seconds=300, seed=0, out_dir=out, max_replays=10)
    assert len(report.findings) == 1, report.summary()
    finding = report.findings[0]
    assert any(kind == "turn" for kind, _ in finding.signature.diffs)
    saved = load_scenario(finding.path)  # a valid lifecycle case: schema-checked, replayable
    assert saved.kind == "lifecycle" and any("commit" in step for step in saved.steps)
    with python_reference_session(tmp_path / "broken", no_updates) as broken:
        assert [r.status for r in broken.run_case(saved)] == [Status.FAIL]
    with python_reference_session(tmp_path / "fixed") as correct:
        assert [r.status for r in correct.run_case(saved)] == [Status.PASS]


def test_a_divergence_recorded_in_a_case_is_known_to_fuzz(tmp_path: Path) -> None:
    files = {"system/Zeta.md": "z\n", "system/alpha.md": "a\n"}
    recorded = {
        "references": [f"npm:{RELEASE}"],
        "fields": ["content", "coreMemory"],
        "kind": "port-limitation",
        "reason": "the port under test sorts by code point",
    }
    write_yaml(
        tmp_path / "corpus" / "compile" / "sorted.yaml",
        {
            "id": "sorted",
            "description": "d",
            "divergences": [recorded],
            "repo": {"commits": [{"files": files}]},
        },
    )
    write_yaml(
        tmp_path / "corpus" / "compile" / "plain.yaml",
        {
            "id": "plain",
            "description": "d",
            "repo": {"commits": [{"files": files}]},
        },
    )
    with python_reference_session(tmp_path, broken_sort, name=f"letta-code@{RELEASE}") as session:
        known = known_signatures(Oracle(session), [tmp_path / "corpus"])
    assert known == {Signature(RELEASE, (("content", "order"), ("coreMemory", "order")))}  # npm:0.32.18 is 0.32.18


def test_reduce_keeps_only_the_client_skills_entries_a_divergence_needs() -> None:
    class SkillsOracle:
        """Diverges while the `bad` skill is given (whatever else is)."""

        def signature(self, candidate: Candidate) -> Signature | None:
            skills = candidate.inputs.get("client_skills")
            bad = isinstance(skills, list) and {"name": "bad"} in skills
            return Signature("x", (("systemPromptWithSkills", "text"),)) if bad else None

    target = Signature("x", (("systemPromptWithSkills", "text"),))
    skills = [{"name": "a"}, 3, {"name": "bad"}, {"name": "b", "description": "d"}]
    reducer = Reducer(SkillsOracle(), target, seconds=30)  # type: ignore[arg-type]
    reduced = reducer.inputs(Candidate(RepoModel(), {"client_skills": skills, "system": "S"}))
    assert reduced.inputs == {"client_skills": [{"name": "bad"}]}


def test_reduce_keeps_every_commit_when_a_gitlink_names_one_of_them_by_position() -> None:
    """A gitlink `commit:N` names the history's commit N; dropping an earlier commit would leave it naming a
    commit that is not there (found by fuzz: the reducer crashed writing such a history)."""

    class AnyHistoryOracle:
        """Diverges whatever the history, so only the gitlink can keep the reducer from dropping commits."""

        def signature(self, candidate: Candidate) -> Signature | None:
            return Signature("x", (("content", "text"),))

    target = Signature("x", (("content", "text"),))
    first = CommitModel({b"system/a.md": Blob(MODE_FILE, b"a\n")})
    second = CommitModel({b"system/b.md": Blob(MODE_FILE, b"b\n")})
    head = CommitModel({b"system/b.md": Blob(MODE_FILE, b"b\n"), b"system/sub": Blob(MODE_GITLINK, b"commit:2")})
    reducer = Reducer(AnyHistoryOracle(), target, seconds=30)  # type: ignore[arg-type]
    reduced = reducer.commits(Candidate(RepoModel([first, second, head]), {}))
    assert len(reduced.model.commits) == 3
    without_link = CommitModel({b"system/b.md": Blob(MODE_FILE, b"b\n")})
    assert len(reducer.commits(Candidate(RepoModel([first, second, without_link]), {})).model.commits) == 1
