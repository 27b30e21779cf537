"""Any implementation under test (`--impl`): how it is named, and that every fault of a protocol program is
an error of the case naming it, `unsupported` is not applicable, and a planted bug fails exactly the cases
that exercise it. Never a pass.

The reference here is the Python port itself standing in for letta-code 0.32.18 (`PortReference`), so no
release is needed: what is tested is how the engine treats the implementation under test. The programs are
tests/fake_impl.py (the port's own protocol server with faults) and tests/planted_bug_impl.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fake_reference import write_cases

from harness.cases.load import load_scenarios
from harness.core.model import CaseResult, CompileRequest, LifecycleOpen, Outcome, Status
from harness.core.reference import ReferenceSpec
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.implementations import ImplSpec
from harness.runners.python_port import PythonPortRunner

TESTS = Path(__file__).resolve().parent
CASES = TESTS.parent / "cases"
FAKE = f"cmd:{sys.executable} {TESTS / 'fake_impl.py'}"
PLANTED = f"cmd:{sys.executable} {TESTS / 'planted_bug_impl.py'}"


class PortReference(Runner):
    """The unmutated port's answers stand in for letta-code 0.32.18's (the machinery is under test)."""

    def __init__(self) -> None:
        self.name = "letta-code@0.32.18"
        self.port = PythonPortRunner("letta-code@0.32.18")

    def compile(self, request: CompileRequest) -> Outcome:
        return self.port.compile(request)

    def lifecycle_open(self, request: LifecycleOpen) -> Outcome:
        return self.port.lifecycle_open(request)

    def lifecycle_step(self, step: dict) -> Outcome:
        return self.port.lifecycle_step(step)

    def lifecycle_close(self) -> None:
        self.port.lifecycle_close()


def run(tmp_path: Path, paths: list[Path], *impls: str, timeout: float = 20.0) -> list[CaseResult]:
    loaded = load_scenarios(paths)
    assert not loaded.errors, loaded.errors
    specs = [ImplSpec.parse(text) for text in impls]
    with Session(
        [ReferenceSpec("npm", "0.32.18")],
        implementations=specs,
        cache=tmp_path / "cache",
        timeout=timeout,
        runner_factory=lambda spec, cache: PortReference(),
    ) as session:
        return session.run(loaded.scenarios)


@pytest.mark.parametrize(
    ("text", "label", "kind"),
    [
        ("python", "python", "python"),
        ("python-cli", "python-cli", "python-cli"),
        ("cmd:python -m memfs_prompt serve", "cmd:python -m memfs_prompt serve", "cmd"),
        ("cmd:  ./my-port --flag 'a b'  ", "cmd:./my-port --flag 'a b'", "cmd"),
        ("letta-server:0.16.8", "letta-server:0.16.8", "letta-server"),
    ],
)
def test_an_impl_spec_names_itself_as_it_was_written(text: str, label: str, kind: str) -> None:
    spec = ImplSpec.parse(text)
    assert (spec.label, spec.kind) == (label, kind)
    assert ImplSpec.parse(spec.label) == spec


def test_a_cmd_impl_splits_its_command_as_a_shell_line() -> None:
    assert ImplSpec.parse("cmd:./my-port --flag 'a b'").argv == ["./my-port", "--flag", "a b"]


@pytest.mark.parametrize("text", ["pyhton", "cmd:", "cmd:   ", "cmd:'unclosed", "letta-server:", "python:3"])
def test_a_wrong_impl_spec_is_refused_with_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match="--impl"):
        ImplSpec.parse(text)


@pytest.mark.parametrize("fault", ["crash", "exit", "hang", "garbage", "partial", "wrong-id", "not-ok"])
def test_every_fault_of_a_protocol_program_is_an_error_of_the_case_naming_it(tmp_path: Path, fault: str) -> None:
    cases = write_cases(tmp_path / "cases", {"honest-before": "", f"faulty-{fault}": fault, "honest-after": ""})
    by_impl = {(r.case_id, r.implementation): r for r in run(tmp_path, [cases], "python", FAKE, timeout=3.0)}
    faulty = by_impl[(f"faulty-{fault}", FAKE)]
    assert faulty.status == Status.ERROR
    assert any(reason.startswith(f"{FAKE} could not run") for reason in faulty.reasons), faulty.reasons
    assert by_impl[(f"faulty-{fault}", "python")].status == Status.PASS  # the reference and the port were fine
    for case in ("honest-before", "honest-after"):  # the program is started again for the next case
        assert by_impl[(case, FAKE)].status == Status.PASS, by_impl[(case, FAKE)].reasons


def test_a_program_that_answers_wrongly_fails_naming_it(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases", {"wrong": "wrong"})
    (result,) = run(tmp_path, [cases], FAKE)
    assert result.status == Status.FAIL and result.implementation == FAKE
    assert {d.field for d in result.diffs} >= {"content"}


def test_an_unsupported_answer_is_not_applicable_never_a_pass(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases", {"unsupported": "unsupported"})
    (result,) = run(tmp_path, [cases], FAKE)
    assert result.status == Status.NOT_APPLICABLE and not result.status.failing
    assert result.reasons and result.reasons[0].startswith(f"{FAKE} does not serve this case")


def test_a_program_without_lifecycle_ops_makes_lifecycle_cases_not_applicable(tmp_path: Path) -> None:
    impl = f"{FAKE} --ops hello,compile"
    results = run(tmp_path, [CASES / "lifecycle" / "raw-system-edit.yaml"], impl)
    assert [r.status for r in results] == [Status.NOT_APPLICABLE]
    assert "lifecycle" in results[0].reasons[0]


def test_a_profile_the_program_does_not_claim_is_not_applicable(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases", {"plain": ""})
    claimed = run(tmp_path, [cases], f"{FAKE} --profiles letta-code@0.32.14")
    other = run(tmp_path, [cases], f"{FAKE} --profiles letta-code@0.25.3")
    assert [r.status for r in claimed] == [Status.PASS]
    assert [r.status for r in other] == [Status.NOT_APPLICABLE]
    assert "letta-code@0.32.14" in other[0].reasons[0]


def test_a_planted_bug_fails_exactly_the_cases_that_exercise_it(tmp_path: Path) -> None:
    """Labels `B` and `a`: code point order puts B first, collation a first; `a` and `b` agree in both."""
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    for case_id, names in {"exercises-order": ("B", "a"), "same-order": ("a", "b")}.items():
        files = "".join(f'        system/{name}.md: "{name}\\n"\n' for name in names)
        (cases / f"{case_id}.yaml").write_text(
            f"id: {case_id}\ndescription: d\nrepo:\n  commits:\n    - files:\n{files}"
        )
    results = {r.case_id: r for r in run(tmp_path, [cases], PLANTED)}
    assert results["exercises-order"].status == Status.FAIL
    assert results["exercises-order"].implementation == PLANTED
    assert results["same-order"].status == Status.PASS


def test_several_implementations_give_one_result_each_per_reference_in_the_order_given(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases", {"one": "", "two": ""})
    results = run(tmp_path, [cases], FAKE, "python")
    assert [(r.case_id, r.implementation) for r in results] == [
        ("one", FAKE),
        ("one", "python"),
        ("two", FAKE),
        ("two", "python"),
    ]
    assert {r.status for r in results} == {Status.PASS}


def test_a_program_speaking_another_protocol_version_is_an_error_for_every_case(tmp_path: Path) -> None:
    program = tmp_path / "future.py"
    program.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    print(json.dumps({'id': r['id'], 'ok': True, 'protocol': 2, 'capabilities': {}, 'record': {}}),"
        " flush=True)\n"
    )
    cases = write_cases(tmp_path / "cases", {"one": "", "two": ""})
    impl = f"cmd:{sys.executable} {program}"
    results = run(tmp_path, [cases], impl)
    assert [r.status for r in results] == [Status.ERROR, Status.ERROR]
    assert all("speaks protocol 2; this harness speaks 1" in r.reasons[0] for r in results)


def test_one_program_serves_every_profile_of_a_run_and_each_request_names_its_profile(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases", {"one": ""})
    loaded = load_scenarios([cases])
    specs = [ReferenceSpec("npm", "0.32.18"), ReferenceSpec("npm", "0.25.3")]  # two profiles
    claimed = f"{FAKE} --profiles letta-code@0.32.14"
    with Session(
        specs,
        implementations=[ImplSpec.parse(claimed)],
        cache=tmp_path / "cache",
        timeout=20.0,
        runner_factory=lambda spec, cache: PortReference(),
    ) as session:
        results = session.run(loaded.scenarios)
        (described,) = session.describe_implementations()
    assert sorted(r.profile for r in results) == ["letta-code@0.25.3", "letta-code@0.32.14"]
    by_profile = {r.profile: r.status for r in results}
    assert by_profile == {"letta-code@0.32.14": Status.PASS, "letta-code@0.25.3": Status.NOT_APPLICABLE}
    assert described["starts"] == 1  # one process for both profiles
