"""Expectations say what a real port needs to say (docs/expectations.md): an entry may name a rule, a tag or a
case glob as well as a case, and may expect an error; `expectations update` records errors and says what it
left out and why; a file is matched to the implementation by the name its hello gives; a stale entry names its
file, its line and the command that rewrites it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from fake_reference import fake_bundle, scenario_yaml
from test_expectations import write, write_case, write_report

from harness.cases.load import load_scenarios
from harness.cli import main as cli
from harness.core.model import CaseResult, Outcome, Scenario, Status
from harness.run.expectations import ExpectationsError, load_expectations
from harness.tools.expectations_update import update_expectations
from harness.verdict.judge import judge

TESTS = Path(__file__).resolve().parent
FAKE = f"cmd:{sys.executable} {TESTS / 'fake_impl.py'}"
IMPL = "cmd:./my-port --serve"
HEAD = f"implementation: {IMPL}\nexpectations:\n"
RECORD = {"content": "S\n\nx", "coreMemory": "x", "compiledAt": "t", "rawSystemHash": "h", "memfsRevision": "r"}


def case(case_id: str, rules: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> Scenario:
    return Scenario(case_id, "d", Path(f"cases/compile/{case_id}.yaml"), tags, {}, {}, rules=rules)


def ok(**changes: str) -> Outcome:
    return Outcome("ok", record={**RECORD, **changes})


def load(tmp_path: Path, entries: str) -> object:
    return load_expectations(write(tmp_path / "my-port.yaml", HEAD + entries))


# --- what an entry may name ----------------------------------------------------------------------------------


def test_a_rule_entry_covers_every_case_that_names_the_rule_and_no_other(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        "  - {rule: memfs-v1, references: ['*'], fields: [content, coreMemory], "
        "kind: port-limitation, reason: we render memfs-v2 only}\n",
    )
    (found,) = loaded.divergences_for(case("a", rules=("memfs-v1", "trim")), "pypi:0.34.12", "p")
    assert (found.reason, found.broad, found.source) == ("we render memfs-v2 only", True, f"{tmp_path}/my-port.yaml:3")
    assert loaded.divergences_for(case("b", rules=("memfs-v2",)), "pypi:0.34.12", "p") == ()


def test_a_tag_entry_and_a_case_glob_cover_the_cases_they_name(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        "  - {tag: bom, references: ['*'], fields: [content], kind: port-limitation, reason: t}\n"
        "  - {cases: 'fm-*', references: ['*'], fields: [content], kind: port-limitation, "
        "reason: g}\n",
    )
    assert [d.reason for d in loaded.divergences_for(case("x", tags=("bom",)), "pypi:0.34.12", "p")] == ["t"]
    assert [d.reason for d in loaded.divergences_for(case("fm-indent"), "pypi:0.34.12", "p")] == ["g"]
    assert loaded.divergences_for(case("other"), "pypi:0.34.12", "p") == ()


def test_a_broad_entry_explains_what_differs_and_lets_a_covered_result_agree(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        "  - {rule: memfs-v1, references: ['*'], fields: [content, coreMemory], "
        "kind: port-limitation, reason: v2 only}\n",
    )
    scenario = case("a", rules=("memfs-v1",))
    expected = loaded.divergences_for(scenario, "pypi:0.34.12", "p")
    assert judge(scenario, "pypi:0.34.12", ok(), ok(content="S\n\n"), expected=expected)[0] == Status.KNOWN
    assert judge(scenario, "pypi:0.34.12", ok(), ok(), expected=expected)[0] == Status.PASS  # not stale
    status, _, reasons = judge(scenario, "pypi:0.34.12", ok(), ok(compiledAt="u"), expected=expected)
    assert status == Status.FAIL and "compiledAt" in reasons[0]  # a field it does not list is not excused


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (
            "{case: a, rule: r, references: ['*'], fields: [content], kind: port-limitation, reason: x}",
            "name exactly one of case (a case id), cases (a glob of case ids), rule",
        ),
        ("{references: ['*'], fields: [content], kind: port-limitation, reason: x}", "it names none"),
        ("{case: a, references: ['*'], kind: port-limitation, reason: x}", "give `fields`"),
        (
            "{case: a, references: ['*'], fields: [content], error: true, kind: port-limitation, reason: x}",
            "one of the two",
        ),
        (
            "{cases: fm-indent, references: ['*'], fields: [content], kind: port-limitation, reason: x}",
            "has no *, ? or [: write case: fm-indent",
        ),
    ],
)
def test_an_entry_that_names_no_one_thing_or_says_neither_fields_nor_error_is_refused_at_its_line(
    tmp_path: Path, entry: str, says: str
) -> None:
    with pytest.raises(ExpectationsError) as info:
        load(tmp_path, f"  - {entry}\n")
    assert info.value.line == 3 and says in str(info.value)


def test_a_rule_tag_or_glob_that_names_no_case_of_the_corpus_is_an_error_at_its_line(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        "  - {case: a, references: ['*'], fields: [content], kind: port-limitation, reason: x}\n"
        "  - {rule: memfs-v3, references: ['*'], fields: [content], kind: port-limitation, "
        "reason: x}\n",
    )
    (problem,) = loaded.check_corpus([case("a", rules=("memfs-v1",))])
    assert problem.line == 4 and "rule 'memfs-v3' names no case of the corpus" in str(problem)


# --- expecting an error --------------------------------------------------------------------------------------


def test_an_error_entry_turns_the_implementations_error_into_known_and_goes_stale_once_it_runs(
    tmp_path: Path,
) -> None:
    loaded = load(
        tmp_path,
        "  - {case: a, references: ['*'], error: 'exited (code 3)', kind: port-limitation, "
        "reason: we crash on huge files}\n",
    )
    scenario = case("a")
    expected = loaded.divergences_for(scenario, "pypi:0.34.12", "p")
    crashed = Outcome("error", error="the process exited (code 3) without answering")
    status, _, reasons = judge(scenario, "pypi:0.34.12", ok(), crashed, impl_label=IMPL, expected=expected)
    assert status == Status.KNOWN and reasons[0].startswith("port-limitation: we crash on huge files")
    hung = Outcome("error", error="no answer within 60 s")  # another error than the one expected
    assert judge(scenario, "pypi:0.34.12", ok(), hung, impl_label=IMPL, expected=expected)[0] == Status.ERROR
    status, _, reasons = judge(scenario, "pypi:0.34.12", ok(), ok(), impl_label=IMPL, expected=expected)
    assert status == Status.STALE and "recorded error no longer happens" in reasons[0]


def test_an_error_entry_never_excuses_an_error_of_the_reference(tmp_path: Path) -> None:
    loaded = load(tmp_path, "  - {case: a, references: ['*'], error: true, kind: port-limitation, reason: x}\n")
    expected = loaded.divergences_for(case("a"), "pypi:0.34.12", "p")
    broken = Outcome("error", error="bun crashed")
    assert judge(case("a"), "pypi:0.34.12", broken, ok(), expected=expected)[0] == Status.ERROR


# --- a stale entry says where it is and what rewrites the file ----------------------------------------------


def test_a_stale_entry_names_its_file_its_line_and_expectations_update(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        "  - {case: b, references: ['*'], fields: [content], kind: port-limitation, reason: x}\n"
        "  - {case: a, references: [pypi:0.34.12], fields: [content], kind: port-limitation, "
        "reason: fixed since}\n",
    )
    expected = loaded.divergences_for(case("a"), "pypi:0.34.12", "p")
    status, _, (reason,) = judge(case("a"), "pypi:0.34.12", ok(), ok(), expected=expected)
    assert status == Status.STALE
    path = tmp_path / "my-port.yaml"
    assert f"the entry at {path}:4 is stale" in reason
    assert f"conformance expectations update REPORT --out {path}" in reason
    assert "remove it from the case" not in reason and "out of its references" not in reason


# --- expectations update: errors recorded, what is left out said ---------------------------------------------


def failed(case_id: str, error: str, reference: Outcome | None = None) -> CaseResult:
    status = Status.ERROR
    return CaseResult(
        case_id,
        "pypi:0.34.12",
        "letta-code@0.34.12",
        status,
        (),
        f"cases/compile/{case_id}.yaml",
        reasons=[f"{IMPL} could not run: {error}"],
        reference_outcome=reference or ok(),
        impl_outcome=Outcome("error", error=error),
        implementation=IMPL,
    )


def differs(case_id: str, status: Status = Status.FAIL) -> CaseResult:
    from harness.verdict.diff import outcome_diff

    reference, impl = ok(), ok(content="S\n\ny")
    diffs = outcome_diff(reference, impl) if status == Status.FAIL else []
    return CaseResult(
        case_id,
        "pypi:0.34.12",
        "letta-code@0.34.12",
        status,
        (),
        f"cases/compile/{case_id}.yaml",
        diffs=diffs,
        reference_outcome=reference,
        impl_outcome=impl if diffs else ok(),
        implementation=IMPL,
    )


@pytest.fixture
def corpus(tmp_path: Path) -> list[Scenario]:
    for case_id in ("crash", "na", "ref-broken", "v1-a", "v1-b", "fine"):
        write_case(tmp_path / "cases" / "compile", case_id)
    return load_scenarios([tmp_path / "cases"]).scenarios


def test_update_records_an_implementation_error_and_says_what_it_left_out_and_why(
    tmp_path: Path, corpus: list[Scenario]
) -> None:
    not_applicable = CaseResult(
        "na",
        "pypi:0.34.12",
        "letta-code@0.34.12",
        Status.NOT_APPLICABLE,
        (),
        "cases/compile/na.yaml",
        implementation=IMPL,
    )
    reference_broke = CaseResult(
        "ref-broken",
        "pypi:0.34.12",
        "letta-code@0.34.12",
        Status.ERROR,
        (),
        "cases/compile/ref-broken.yaml",
        reference_outcome=Outcome("error", error="bun died"),
        impl_outcome=ok(),
        implementation=IMPL,
    )
    report = write_report(tmp_path / "report", [failed("crash", "exited (code 3)"), not_applicable, reference_broke])
    update = update_expectations(report, tmp_path / "my-port.yaml", IMPL, corpus)
    (entry,) = load_expectations(write(tmp_path / "new.yaml", update.text)).entries
    assert (entry.case, entry.error, entry.kind) == ("crash", "", "unexplained")
    assert "fails here against pypi:0.34.12" in entry.reason and "exited (code 3)" in entry.reason
    assert update.left_out_lines() == [
        "left out 1 result: an error of the reference or the harness, not of the implementation: rerun once it runs",
        "left out 1 result: not applicable: the implementation was not asked, or does not serve the case",
    ]
    again = update_expectations(report, write(tmp_path / "my-port.yaml", update.text), IMPL, corpus)
    assert again.text == update.text  # and a second update keeps it


def test_update_drops_an_error_entry_once_the_case_runs(tmp_path: Path, corpus: list[Scenario]) -> None:
    out = write(
        tmp_path / "my-port.yaml",
        HEAD + "  - {case: crash, references: ['*'], error: true, kind: port-limitation, reason: x}\n",
    )
    update = update_expectations(write_report(tmp_path / "report", [differs("crash", Status.PASS)]), out, None, corpus)
    assert [(c.action, c.case) for c in update.changes] == [("dropped", "crash")]


def test_update_keeps_a_broad_entry_that_still_explains_and_drops_one_that_explains_nothing(
    tmp_path: Path, corpus: list[Scenario]
) -> None:
    out = write(
        tmp_path / "my-port.yaml",
        HEAD
        + (
            "  - {cases: 'v1-*', references: ['*'], fields: [content], kind: port-limitation, reason: v2 only}\n"
            "  - {cases: 'fin*', references: ['*'], fields: [content], kind: port-limitation, reason: was broken}\n"
        ),
    )
    report = write_report(tmp_path / "report", [differs("v1-a"), differs("v1-b"), differs("fine", Status.PASS)])
    update = update_expectations(report, out, None, corpus)
    entries = load_expectations(write(tmp_path / "new.yaml", update.text)).entries
    assert [e.selector for e in entries] == [("cases", "v1-*")]  # no per-case entry for v1-a or v1-b
    assert [(c.action, c.case) for c in update.changes] == [("kept", "cases v1-*"), ("dropped", "cases fin*")]


# --- a file matched by the name the implementation's hello gives ----------------------------------------------


def test_a_file_naming_the_hello_name_follows_the_program_wherever_it_lives(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    (cases / "wrong.yaml").write_text(scenario_yaml("wrong").replace("inputs:\n", "inputs:\n  agent_id: FAULT:wrong\n"))
    expectations = write(
        tmp_path / "fake.yaml",
        "name: fake (tests/fake_impl.py)\nexpectations:\n"
        "  - {case: wrong, references: ['*'], fields: [content], kind: port-limitation, "
        "reason: it appends a bang}\n",
    )
    moved = tmp_path / "elsewhere" / "adapter.py"
    moved.parent.mkdir()
    shutil.copy(TESTS / "fake_impl.py", moved)
    bundle = f"bundle:{fake_bundle(tmp_path / 'bundle')}"
    for impl in (FAKE, f"cmd:{sys.executable} {moved}"):  # two places, one file
        report = tmp_path / "report"
        argv = [
            "run",
            str(cases),
            "--reference",
            bundle,
            "--impl",
            impl,
            "--expectations",
            str(expectations),
            "--report",
            str(report),
            "--no-timing",
        ]
        assert cli.main(argv) == 0, capsys.readouterr()
        (result,) = json.loads((report / "report.json").read_text())["results"]
        assert result["status"] == "known-divergence"


def test_a_file_whose_name_no_implementation_gives_is_refused_naming_what_they_say(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    (cases / "a.yaml").write_text(scenario_yaml("a"))
    expectations = write(tmp_path / "x.yaml", "name: my-port\nexpectations: []\n")
    argv = [
        "run",
        str(cases),
        "--reference",
        f"bundle:{fake_bundle(tmp_path / 'bundle')}",
        "--impl",
        FAKE,
        "--expectations",
        str(expectations),
    ]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "it is for the implementation named 'my-port' (name:)" in err
    assert "says 'fake (tests/fake_impl.py)'" in err


# --- `fields: ['*']`, and the v2-only port's file ---------------------------------------------------------------


def test_a_broad_entry_of_any_field_covers_whatever_differs_and_a_case_entry_of_any_field_goes_stale(
    tmp_path: Path,
) -> None:
    entries = (
        "  - {rule: memfs-v1, references: ['*'], fields: ['*'], kind: port-limitation, reason: r}\n"
        "  - {case: b, references: ['*'], fields: ['*'], kind: port-limitation, reason: s}\n"
    )
    loaded = load(tmp_path, entries)
    v1 = case("a", rules=("memfs-v1",))
    expected = loaded.divergences_for(v1, "pypi:0.34.12", "p")
    assert judge(v1, "pypi:0.34.12", ok(), ok(compiledAt="u", content="c"), expected=expected)[0] == Status.KNOWN
    assert judge(v1, "pypi:0.34.12", ok(), ok(), expected=expected)[0] == Status.PASS
    expected = loaded.divergences_for(case("b"), "pypi:0.34.12", "p")
    assert judge(case("b"), "pypi:0.34.12", ok(), ok(content="c"), expected=expected)[0] == Status.KNOWN
    assert judge(case("b"), "pypi:0.34.12", ok(), ok(), expected=expected)[0] == Status.STALE


V2_ONLY = f"cmd:{sys.executable} {TESTS / 'v2_only_impl.py'}"
SAMPLE = "bom-double or bs-folded or collation-icu-han-v2 or generate-v2-listing-at-budget or empty-unborn"


def sample_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, str], str]:
    """Part of the corpus (v1 and v2 layouts) against the port's answers as 0.34.12's (a fake bun)."""
    report = tmp_path / "report"
    bundle = fake_bundle(tmp_path / "bundle", version="0.34.12")
    argv = [
        "run",
        str(TESTS.parent / "cases"),
        "-k",
        SAMPLE,
        "--reference",
        f"bundle:{bundle}",
        "--impl",
        V2_ONLY,
        "--report",
        str(report),
        "--no-timing",
        *extra,
    ]
    code = cli.main(argv)
    printed = capsys.readouterr()
    results = json.loads((report / "report.json").read_text())["results"]
    return code, {r["case"]: r["status"] for r in results}, printed.out + printed.err


def test_the_v2_only_port_is_green_with_two_rule_entries_or_with_its_features_declared_and_none(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, statuses, _ = sample_run(tmp_path, capsys)
    assert code == 1 and "fail" in statuses.values()  # v1 layouts are not rendered: failures
    assert set(statuses) == set(SAMPLE.split(" or "))
    expectations = TESTS / "data" / "v2-only-expectations.yaml"
    assert len(load_expectations(expectations).entries) <= 5
    code, statuses, printed = sample_run(tmp_path, capsys, "--expectations", str(expectations))
    assert code == 0, printed
    assert set(statuses.values()) <= {"pass", "known-divergence"} and "pass" in statuses.values()
    code, statuses, printed = sample_run(tmp_path, capsys, "--impl-env", "V2_ONLY_FEATURES=1")
    assert code == 0, printed
    assert set(statuses.values()) == {"pass", "not-applicable"}
    assert "does not declare feature" in printed


def test_a_broad_entry_that_explains_nothing_in_a_corpus_run_is_stale_and_fails_the_run(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    for case_id in ("fm-a", "fm-b"):
        (cases / f"{case_id}.yaml").write_text(scenario_yaml(case_id))
    expectations = write(
        tmp_path / "fake.yaml",
        f"implementation: '{FAKE}'\nexpectations:\n"
        "  - {cases: 'fm-*', references: ['*'], fields: ['*'], kind: port-limitation, "
        "reason: fixed since}\n",
    )
    argv = [
        "run",
        str(cases),
        "--reference",
        f"bundle:{fake_bundle(tmp_path / 'bundle')}",
        "--impl",
        FAKE,
        "--expectations",
        str(expectations),
    ]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert f"{expectations}:3: cases 'fm-*' covered 2 results of this run and none differs" in err
    assert f"conformance expectations update REPORT --out {expectations}" in err
