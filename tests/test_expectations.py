"""harness.run.expectations and `conformance expectations update`: an implementation's known failures in a file of
its own. A bad file is refused with its line and the fix; an entry's reference is matched by what `--reference`
would label it; the update keeps reasons, adds what nobody explained yet, drops what no longer differs, and
writes the same bytes whatever order it read things in."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cases.load import load_scenario, load_scenarios
from harness.cli.main import main
from harness.core.model import CaseResult, FieldDiff, Outcome, RunReport, Scenario, Status
from harness.core.reference import ReferenceSpec, default_reference
from harness.report.writers import write_reports
from harness.run.expectations import (
    Expectation,
    ExpectationsError,
    load_expectations,
    reference_label,
    reference_spelling,
)
from harness.run.expectations_write import dump_expectations
from harness.runners.implementations import ImplSpec
from harness.tools.expectations_update import update_expectations
from harness.verdict.diff import outcome_diff
from harness.verdict.judge import divergence_verdict

ROOT = Path(__file__).resolve().parents[1]
SERVER = "letta-server:0.16.8"
HEAD = f"implementation: {SERVER}\nexpectations:\n"
ENTRY = "  - case: bom-double\n    references: [pypi:0.34.12]\n    fields: [memory]\n    kind: product-difference\n"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def refusal(tmp_path: Path, text: str | bytes) -> ExpectationsError:
    path = write(tmp_path / "impl.yaml", text)
    with pytest.raises(ExpectationsError) as info:
        load_expectations(path)
    assert info.value.path == path
    return info.value


# --- loading: every refusal names the line and the fix ---------------------------------------------------


def test_an_unknown_key_of_an_entry_names_its_line_and_the_nearest_valid_key(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY + '    reasn: "bom"\n')
    assert error.line == 7
    assert "unknown key 'reasn' in expectations/0; did you mean 'reason'?" in str(error)
    assert str(error).startswith(f"{tmp_path / 'impl.yaml'}:7: ")


def test_an_unknown_top_level_key_names_the_nearest_valid_one(tmp_path: Path) -> None:
    error = refusal(tmp_path, f"implementaton: {SERVER}\nexpectations: []\n")
    assert error.line == 1 and "did you mean 'implementation'?" in str(error)


def test_a_missing_reason_is_refused_at_its_entry(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY)
    assert error.line == 3 and "'reason' is a required property (add it)" in str(error)


def test_an_empty_reason_is_refused_with_what_to_write(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY + '    reason: "  "\n')
    assert error.line == 7 and "reason is empty" in str(error) and "kind: unexplained" in str(error)


def test_an_unknown_kind_names_the_nearest_one(tmp_path: Path) -> None:
    text = HEAD + ENTRY.replace("product-difference", "product-diference") + "    reason: r\n"
    error = refusal(tmp_path, text)
    assert error.line == 6 and "did you mean 'product-difference'?" in str(error)


def test_the_same_entry_twice_under_two_spellings_is_a_duplicate(tmp_path: Path) -> None:
    second = ENTRY.replace("[pypi:0.34.12]", "['0.34.12']")
    error = refusal(tmp_path, HEAD + ENTRY + "    reason: r\n" + second + "    reason: r2\n")
    assert error.line == 8 and "duplicate of the entry on line 3" in str(error)


def test_entries_that_both_apply_to_one_result_are_refused(tmp_path: Path) -> None:
    second = ENTRY.replace("[pypi:0.34.12]", "['*']").replace("[memory]", "[memfsRevision]")
    error = refusal(tmp_path, HEAD + ENTRY + "    reason: r\n" + second + "    reason: r2\n")
    assert error.line == 8 and "overlaps the entry on line 3" in str(error) and "pypi:0.34.12" in str(error)


def test_entries_for_different_profiles_of_one_reference_do_not_overlap(tmp_path: Path) -> None:
    one = ENTRY.replace("    fields", "    profiles: [letta-code@0.32.14]\n    fields") + "    reason: r\n"
    two = one.replace("letta-code@0.32.14", "letta-code@0.34.12")
    assert len(load_expectations(write(tmp_path / "impl.yaml", HEAD + one + two)).entries) == 2


def test_a_reference_that_reference_would_refuse_is_refused_at_its_line(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY.replace("[pypi:0.34.12]", "[pnpm:0.34.12]") + "    reason: r\n")
    assert error.line == 4 and "references:" in str(error) and "pnpm:0.34.12" in str(error)


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("0.34.21", "'0.34.21' is not a pinned release; did you mean 0.34.12? (pinned: npm:0.25.3,"),
        ("pypi:0.32.17", "`conformance pin pypi:0.32.17`"),
        ("letta-server@0.16.8", "--impl letta-server:0.16.8; what it does differently goes in its expectations file"),
    ],
)
def test_a_reference_that_is_no_pinned_release_is_refused_at_its_line(tmp_path: Path, written: str, says: str) -> None:
    """Such an entry would match no result: the difference it explains would fail, and its stale check never run."""
    error = refusal(tmp_path, HEAD + ENTRY.replace("[pypi:0.34.12]", f"[{written!r}]") + "    reason: r\n")
    assert error.line == 4 and f"{tmp_path / 'impl.yaml'}:4: references: " in str(error) and says in str(error)


def test_the_implementation_is_read_as_impl_reads_it_and_refused_at_its_line(tmp_path: Path) -> None:
    body = "expectations:\n" + ENTRY + "    reason: r\n"
    loaded = load_expectations(write(tmp_path / "server.yaml", "implementation: letta-server@0.16.8\n" + body))
    assert ImplSpec.parse(loaded.implementation).label == SERVER  # as its runner is named
    error = refusal(tmp_path, "implementation: letta-srver:0.16.8\n" + body)
    assert error.line == 1 and "implementation: --impl 'letta-srver:0.16.8': use python, python-cli" in str(error)


def test_an_entry_naming_neither_references_nor_profiles_says_what_to_add(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY.replace("    references: [pypi:0.34.12]\n", "") + "    reason: r\n")
    assert error.line == 3 and "references: ['*']" in str(error)


def test_a_misspelt_record_field_names_the_nearest_field(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY.replace("[memory]", "[memory, coreMemroy]") + "    reason: r\n")
    assert error.line == 5 and "did you mean 'coreMemory'?" in str(error)


def test_the_case_loader_s_yaml_rules_hold_here_too(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEAD + ENTRY + "    reason: r\n    kind: upstream-bug\n")
    assert error.line == 8 and "given twice (first on line 6)" in str(error)
    error = refusal(tmp_path, (HEAD + ENTRY + "    reason: r\n").encode() + b"  # \xff\n")
    assert error.line == 8 and "not UTF-8" in str(error)


def test_an_entry_of_a_case_the_corpus_lacks_is_a_stale_entry_naming_its_line(tmp_path: Path) -> None:
    cases = write_case(tmp_path / "cases" / "compile", "bom-doubled")
    path = write(tmp_path / "impl.yaml", HEAD + ENTRY + "    reason: r\n")
    (problem,) = load_expectations(path).check_corpus([load_scenario(cases)])
    assert str(problem).startswith(f"{path}:3: case 'bom-double' is not in the corpus")
    assert "remove it" in str(problem) and "did you mean 'bom-doubled'?" in str(problem)


def test_a_compile_case_s_entry_may_name_only_record_fields(tmp_path: Path) -> None:
    cases = write_case(tmp_path / "cases" / "compile", "bom-double")
    path = write(tmp_path / "impl.yaml", HEAD + ENTRY.replace("[memory]", "[ui_messages]") + "    reason: r\n")
    (problem,) = load_expectations(path).check_corpus([load_scenario(cases)])
    assert problem.line == 3 and "no field 'ui_messages'" in str(problem)


# --- the spelling rule: an entry's reference is what --reference would label it --------------------------


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("0.34.12", "pypi:0.34.12"),  # pinned on PyPI only (reference/manifest.json): a bare version means PyPI
        ("pypi:0.34.12", "pypi:0.34.12"),
        ("npm:0.32.18", "0.32.18"),  # report labels write npm releases bare (docs/report-format.md)
        ("0.32.18", "0.32.18"),
        ("npm:0.32.18@node", "0.32.18@node"),
        ("golden", "golden"),
        ("*", "*"),
    ],
)
def test_a_reference_is_matched_by_its_label_however_it_is_spelt(written: str, label: str) -> None:
    assert reference_label(written) == label
    assert reference_label(reference_spelling(label)) == label


def test_the_spelling_written_for_a_label_says_its_registry() -> None:
    assert [reference_spelling(x) for x in ("0.32.18", "pypi:0.34.12")] == ["npm:0.32.18", "pypi:0.34.12"]


# --- divergences_for ------------------------------------------------------------------------------------


def case(case_id: str, rules: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> Scenario:
    return Scenario(case_id, "d", Path(f"cases/compile/{case_id}.yaml"), tags, {}, {}, rules=rules)


def test_divergences_for_matches_case_reference_and_profile(tmp_path: Path) -> None:
    text = HEAD + (
        "  - {case: a, references: ['0.34.12'], fields: [memory], kind: product-difference, reason: by reference}\n"
        "  - {case: b, profiles: [letta-code@0.32.14], fields: [thrown], kind: upstream-bug, reason: by profile}\n"
        "  - {case: c, references: [npm:0.32.18], profiles: [letta-code@0.32.14], fields: [content],\n"
        "     kind: port-limitation, reason: both, link: 'https://example.invalid/1'}\n"
    )
    loaded = load_expectations(write(tmp_path / "impl.yaml", text))
    (a,) = loaded.divergences_for(case("a"), "pypi:0.34.12", "letta-code@0.34.12")
    assert (a.fields, a.kind, a.reason, a.link) == (("memory",), "product-difference", "by reference", None)
    assert loaded.divergences_for(case("a"), "0.32.18", "letta-code@0.34.12") == ()
    assert [d.reason for d in loaded.divergences_for(case("b"), "0.32.18", "letta-code@0.32.14")] == ["by profile"]
    assert loaded.divergences_for(case("b"), "0.32.18", "letta-code@0.32.17") == ()
    assert [d.link for d in loaded.divergences_for(case("c"), "0.32.18", "letta-code@0.32.14")] == [
        "https://example.invalid/1"
    ]
    assert (
        loaded.divergences_for(case("c"), "pypi:0.32.18", "letta-code@0.32.14") == ()
    )  # PyPI's 0.32.18 is another artifact
    assert loaded.divergences_for(case("d"), "pypi:0.34.12", "letta-code@0.34.12") == ()


def test_a_divergence_from_the_file_turns_fail_into_known_and_then_into_stale(tmp_path: Path) -> None:
    scenario = load_scenario(write_case(tmp_path / "cases" / "compile", "a"))
    text = HEAD + "  - {case: a, references: [pypi:0.34.12], fields: [memory], kind: product-difference, reason: r}\n"
    listed = load_expectations(write(tmp_path / "impl.yaml", text)).divergences_for(case("a"), "pypi:0.34.12", "p")
    recorded = replace(scenario, divergences=listed)
    assert divergence_verdict(scenario, "pypi:0.34.12", {"memory"})[0] == Status.FAIL
    assert divergence_verdict(recorded, "pypi:0.34.12", {"memory"}) == (Status.KNOWN, ["product-difference: r"])
    assert divergence_verdict(recorded, "pypi:0.34.12", set())[0] == Status.STALE


# --- update ---------------------------------------------------------------------------------------------


def write_case(directory: Path, case_id: str, divergences: str = "") -> Path:
    text = f'id: {case_id}\ndescription: d\nrepo:\n  commits:\n    - files:\n        system/a.md: "x"\n{divergences}'
    return write(directory / f"{case_id}.yaml", text)


def result(
    case_id: str, reference: str, reference_memory: str, memory: str, implementation: str = SERVER
) -> CaseResult:
    ref, impl = (Outcome("ok", record={"memory": m, "memfsRevision": None}) for m in (reference_memory, memory))
    diffs = outcome_diff(ref, impl, ("memory", "memfsRevision"))
    status = Status.FAIL if diffs else Status.PASS
    return CaseResult(
        case_id,
        reference,
        "letta-code@0.34.12",
        status,
        (),
        f"cases/compile/{case_id}.yaml",
        diffs=diffs,
        reference_outcome=ref,
        impl_outcome=impl,
        implementation=implementation,
    )


def write_report(directory: Path, results: list[CaseResult]) -> Path:
    """A report.json as `conformance run` writes it, each result naming its implementation."""
    paths = write_reports(RunReport(results, [], [], ["conformance", "run"], timing=False), directory)
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    by_key = {(r.case_id, r.reference): r.implementation for r in results}
    for entry in data["results"]:
        entry.setdefault("implementation", by_key[(entry["case"], entry["reference"])])
    paths["json"].write_text(json.dumps(data), encoding="utf-8")
    return paths["json"]


KEPT = "  - {case: kept, references: [pypi:0.34.12], fields: [memory], kind: product-difference, reason: the rule}\n"
GONE = "  - {case: gone, references: [pypi:0.34.12], fields: [memory], kind: upstream-bug, reason: fixed since}\n"
NOT_RUN = "  - {case: not-run, references: ['*'], fields: [thrown], kind: upstream-bug, reason: not in this report}\n"


@pytest.fixture
def corpus(tmp_path: Path) -> list:
    for case_id in ("kept", "gone", "new", "not-run", "other"):
        write_case(tmp_path / "cases" / "compile", case_id)
    return load_scenarios([tmp_path / "cases"]).scenarios


def test_update_keeps_reasons_adds_unexplained_and_drops_stale(tmp_path: Path, corpus: list) -> None:
    out = write(tmp_path / "impl.yaml", HEAD + KEPT + GONE + NOT_RUN)
    report = write_report(
        tmp_path / "report",
        [
            result("kept", "pypi:0.34.12", "a\nb", "a\nc"),
            result("gone", "pypi:0.34.12", "same", "same"),
            result("new", "pypi:0.34.12", "<memory>x", "<memory>y"),
            result("other", "pypi:0.34.12", "p", "q", implementation="python"),  # another implementation's result
        ],
    )
    update = update_expectations(report, out, corpus=corpus)
    written = load_expectations(write(tmp_path / "new.yaml", update.text))
    by_case = {e.case: e for e in written.entries}
    assert sorted(by_case) == ["kept", "new", "not-run"]
    assert (by_case["kept"].kind, by_case["kept"].reason) == ("product-difference", "the rule")
    assert by_case["not-run"].reason == "not in this report" and by_case["not-run"].references == ("*",)
    new = by_case["new"]
    assert (new.kind, new.references, new.fields) == ("unexplained", ("pypi:0.34.12",), ("memory",))
    assert new.reason.startswith(f"not explained yet: {SERVER} differs from pypi:0.34.12")
    assert "first difference: memory at byte 8: " in new.reason  # "<memory>" is bytes 0-7; x and y are byte 8
    assert "LATIN SMALL LETTER X" in new.reason and "LATIN SMALL LETTER Y" in new.reason
    assert [(c.action, c.case) for c in update.changes if c.action != "kept"] == [("dropped", "gone"), ("added", "new")]
    assert update.summary() == "1 added, 2 kept, 0 changed, 1 dropped"


def test_a_new_reason_quotes_the_difference_of_the_compared_view_not_of_the_raw_records(
    tmp_path: Path, corpus: list
) -> None:
    """The server is compared on the product view: `memory` is in the server's record but not in letta-code's
    (whose coreMemory holds it), so only the report's own words say what differed."""
    letta_code = Outcome("ok", record={"coreMemory": "<memory>x</memory>\n\n<memory_metadata>\n</memory_metadata>"})
    server = Outcome("ok", record={"memory": "\n\n<memory>y</memory>", "memfsRevision": None})
    diff = FieldDiff("memory", "<memory>x</memory>", "<memory>y</memory>", 8)
    new = CaseResult(
        "new",
        "pypi:0.34.12",
        "letta-code@0.34.12",
        Status.FAIL,
        (),
        "cases/compile/new.yaml",
        diffs=[diff],
        reference_outcome=letta_code,
        impl_outcome=server,
        implementation=SERVER,
    )
    update = update_expectations(write_report(tmp_path / "report", [new]), tmp_path / "impl.yaml", corpus=corpus)
    (entry,) = load_expectations(write(tmp_path / "new.yaml", update.text)).entries
    assert "memory at byte 8: reference U+0078 LATIN SMALL LETTER X" in entry.reason
    assert "U+0079 LATIN SMALL LETTER Y" in entry.reason


def test_update_narrows_references_and_fields_to_what_still_differs(tmp_path: Path, corpus: list) -> None:
    entry = (
        "  - {case: kept, references: [npm:0.32.18, '0.34.12'], fields: [memory, memfsRevision],\n"
        "     kind: product-difference, reason: the rule, link: 'https://example.invalid/7'}\n"
    )
    out = write(tmp_path / "impl.yaml", HEAD + entry)
    report = write_report(
        tmp_path / "report",
        [
            result("kept", "0.32.18", "same", "same"),
            result("kept", "pypi:0.34.12", "a", "b"),
        ],
    )
    update = update_expectations(report, out, corpus=corpus)
    (kept,) = load_expectations(write(tmp_path / "new.yaml", update.text)).entries
    assert (kept.references, kept.fields) == (("0.34.12",), ("memory",))  # the spelling written stays
    assert (kept.reason, kept.link) == ("the rule", "https://example.invalid/7")
    assert [c.action for c in update.changes] == ["changed"]


def test_update_drops_the_entries_of_removed_cases_and_leaves_what_a_case_records(tmp_path: Path) -> None:
    recorded = "divergences:\n  - {references: ['*'], fields: [memory], kind: upstream-bug, reason: upstream}\n"
    write_case(tmp_path / "cases" / "compile", "recorded", recorded)
    corpus = load_scenarios([tmp_path / "cases"]).scenarios
    out = write(tmp_path / "impl.yaml", HEAD + GONE)
    report = write_report(tmp_path / "report", [result("recorded", "pypi:0.34.12", "a", "b")])
    update = update_expectations(report, out, corpus=corpus)
    assert load_expectations(write(tmp_path / "new.yaml", update.text)).entries == ()
    assert [(c.action, c.detail) for c in update.changes] == [("dropped", "the corpus has no such case")]


def test_update_takes_a_lifecycle_case_s_differing_observations(tmp_path: Path, corpus: list) -> None:
    turns = [
        {"turn": 1, "step": "turn 1", "python": {}, "reference": {}, "diffs": []},
        {
            "turn": 2,
            "step": "turn 2",
            "python": {},
            "reference": {},
            "diffs": [
                {"observation": "system_has:fact", "reference": True, "python": False},
                {"observation": "ui_messages", "reference": 3, "python": 1},
            ],
        },
    ]
    lifecycle = CaseResult(
        "new",
        "pypi:0.34.12",
        "letta-code@0.34.12",
        Status.FAIL,
        (),
        "cases/lifecycle/new.yaml",
        turns=turns,
        implementation=SERVER,
    )
    report = write_report(tmp_path / "report", [lifecycle])
    update = update_expectations(report, tmp_path / "impl.yaml", corpus=None)
    (new,) = load_expectations(write(tmp_path / "new.yaml", update.text)).entries
    assert new.fields == ("system_has:fact", "ui_messages")
    assert "first difference: turn 2 system_has:fact: reference True, implementation False" in new.reason


def test_update_needs_to_know_which_implementation_when_a_report_has_several(tmp_path: Path) -> None:
    report = write_report(
        tmp_path / "report", [result("a", "0.32.18", "x", "y", "python"), result("b", "0.32.18", "x", "y", SERVER)]
    )
    with pytest.raises(Exception, match="choose one with --implementation"):
        update_expectations(report, tmp_path / "impl.yaml")
    update = update_expectations(report, tmp_path / "impl.yaml", implementation="python")
    assert (
        update.text.startswith("implementation: python\n") and "case: a" in update.text and "case: b" not in update.text
    )


# --- determinism ----------------------------------------------------------------------------------------


def test_the_written_file_does_not_depend_on_the_order_things_were_read_in(tmp_path: Path, corpus: list) -> None:
    results = [
        result(case_id, reference, "a", "b")
        for case_id in ("kept", "new", "other")
        for reference in ("0.32.18", "pypi:0.34.12", "0.32.18@node")
    ]
    texts = set()
    for seed in range(3):
        shuffled, entries = results[:], [KEPT, GONE, NOT_RUN]
        random.Random(seed).shuffle(shuffled)
        random.Random(seed).shuffle(entries)
        out = write(tmp_path / f"impl-{seed}.yaml", HEAD + "".join(entries))
        report = write_report(tmp_path / f"report-{seed}", shuffled)
        texts.add(update_expectations(report, out, corpus=corpus).text)
        again = write(tmp_path / f"again-{seed}.yaml", next(iter(texts)))
        assert update_expectations(report, again, corpus=corpus).text == next(iter(texts))  # a second run: no change
    assert len(texts) == 1
    (text,) = texts
    assert "references: [npm:0.32.18, npm:0.32.18@node, pypi:0.34.12]" in text  # release order, baseline first


def test_the_writer_sorts_entries_by_case_then_reference_in_release_order() -> None:
    entries = [
        Expectation("b", ("memory",), "unexplained", "r", ("pypi:0.34.12",)),
        Expectation("a", ("memory",), "unexplained", "r", ("pypi:0.34.12",)),
        Expectation("a", ("memory",), "unexplained", "r", ("npm:0.32.18",)),
    ]
    text = dump_expectations(SERVER, entries)
    assert text == dump_expectations(SERVER, entries[::-1])
    order = re.findall(r"case: (\S+)\n    references: \[(\S+)\]", text)
    assert order == [("a", "npm:0.32.18"), ("a", "pypi:0.34.12"), ("b", "pypi:0.34.12")]


@pytest.mark.parametrize(
    "reason",
    [
        "a: b # c",
        "1:20",
        "null",
        "'quoted' \"twice\"",
        "back\\slash",
        "tab\tnew\nline",
        "\ufeffbom",
        "nel\u0085",
        "del\x7f",
        "ls\u2028",
        "emoji \U0001f600",
        "  padded  ",
        "é",
    ],
)
def test_a_written_value_reads_back_exactly(tmp_path: Path, reason: str) -> None:
    entry = Expectation("a", ("memory",), "unexplained", reason, (reason_ref := "pypi:0.34.12",), link=reason)
    text = dump_expectations(f"cmd:{reason}", [entry], description=reason)  # an implementation --impl takes
    loaded = load_expectations(write(tmp_path / "impl.yaml", text))
    assert (loaded.implementation, loaded.description) == (f"cmd:{reason}", reason)
    assert (loaded.entries[0].reason, loaded.entries[0].link, loaded.entries[0].references) == (
        reason,
        reason,
        (reason_ref,),
    )


# --- the CLI ----------------------------------------------------------------------------------------------


def test_the_command_writes_the_file_and_says_what_changed(
    tmp_path: Path, corpus: list, capsys: pytest.CaptureFixture[str]
) -> None:
    out = write(tmp_path / "impl.yaml", HEAD + KEPT + GONE)
    report = write_report(
        tmp_path / "report",
        [
            result("kept", "pypi:0.34.12", "a", "b"),
            result("gone", "pypi:0.34.12", "a", "a"),
            result("new", "pypi:0.34.12", "a", "b"),
        ],
    )
    args = ["expectations", "update", str(report), "--out", str(out), "--cases", str(tmp_path / "cases")]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert re.search(r"^dropped +gone  references pypi:0\.34\.12  \(stale: no longer differs", printed, re.M)
    assert re.search(r"^added +new  references pypi:0\.34\.12  \(unexplained: memory\)", printed, re.M)
    assert f"1 added, 1 kept, 0 changed, 1 dropped; {out} updated" in printed
    assert [e.case for e in load_expectations(out).entries] == ["kept", "new"]
    assert main(args) == 0 and capsys.readouterr().out.endswith(f"{out} unchanged\n")


# --- the Letta server's file and docs/products.md ----------------------------------------------------------

SERVER_FILE = ROOT / "expectations" / "letta-server-0.16.8.yaml"


def product_table() -> dict[str, tuple[list[str], str]]:
    """docs/products.md's "Product differences (memory rendering)" rows: rule -> (minimal cases, corpus count)."""
    docs = (ROOT / "docs" / "products.md").read_text(encoding="utf-8")
    section = docs.split("## Product differences (memory rendering)", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and (rule := re.match(r"`([a-z0-9-]+)`", cells[0])):
            rows[rule.group(1)] = (re.findall(r"`([a-z0-9.-]+)`", cells[3]), cells[4])
    return rows


def unexplained_table() -> set[str]:
    """The cases docs/products.md lists under "Differences not yet explained"."""
    docs = (ROOT / "docs" / "products.md").read_text(encoding="utf-8")
    if "## Differences not yet explained" not in docs:
        return set()
    section = docs.split("## Differences not yet explained", 1)[1].split("\n## ", 1)[0]
    return {found.group(1) for line in section.splitlines() if (found := re.match(r"\| `([a-z0-9.-]+)` \|", line))}


def test_docs_products_table_and_the_server_s_expectations_agree() -> None:
    """Checked, not generated: every rule row of docs/products.md names as many cases as the file has entries
    whose reason starts with that rule, its minimal cases are among them, and every rule of the file has a row;
    an `unexplained` entry has no rule yet, and the page lists its case among those not yet explained."""
    entries = load_expectations(SERVER_FILE).entries
    by_rule: dict[str, list[str]] = {}
    for entry in entries:
        if entry.kind != "unexplained":
            by_rule.setdefault(entry.reason.split(":", 1)[0], []).append(entry.case)
    table = product_table()
    assert len(table) >= 20, "the table was not found"
    for rule, (minimal, count) in table.items():
        if count == "–":  # not counted: the rule has no entry of its own
            assert rule not in by_rule, rule
            continue
        assert int(count.split()[0]) == len(by_rule.get(rule, [])), f"{rule}: docs say {count}"
        assert set(minimal) <= set(by_rule[rule]), rule
    assert set(by_rule) <= set(table), set(by_rule) - set(table)
    assert {e.case for e in entries if e.kind == "unexplained"} == unexplained_table()


def test_the_server_s_file_covers_its_cases_against_the_pinned_default() -> None:
    """Against the pinned default letta-code; a golden case (no runnable reference) against the spec's bytes."""
    loaded = load_expectations(SERVER_FILE)
    assert loaded.implementation == SERVER
    assert {e.labels for e in loaded.entries} == {(ReferenceSpec.parse(default_reference()).label,), ("golden",)}
    assert {e.kind for e in loaded.entries} <= {"product-difference", "unexplained"}
    cases = {path.stem: path for path in (ROOT / "cases").rglob("*.yaml")}
    assert [e.case for e in loaded.entries if e.case not in cases] == []
    golden = [e.case for e in loaded.entries if e.labels == ("golden",)]
    assert [c for c in golden if "\nexpect:" not in cases[c].read_text(encoding="utf-8")] == []
    # the product differences left the corpus: no case records one itself any more
    assert [c for c, path in cases.items() if "letta-server@" in path.read_text(encoding="utf-8")] == []
