"""harness.verdict.attribute and what reports make of it: each failing result put on the rule most likely
responsible, the rules in the order a porter should fix them, and the evidence (a guess says it is one).

The results are made by hand (tests/report_examples.py's `case`), each case naming its rules, and a small
rules table stands in for cases/rules.yaml; every expected entry below is worked out from those lists.
Then the same entries in the terminal (explained_lines), report.json (`attribution`, `rules`, each failing
result's `attributed`, schema-valid) and index.html (the first table), and the report's bulk: only each
entry's representative keeps its full values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import jsonschema
import pytest
from report_examples import case, record

from harness.cli.terminal import explained_lines
from harness.core.model import CaseResult, Outcome, RunReport, Status
from harness.report.explained import RULES, RuleRow, explain, shown_in_full
from harness.report.groups import cause_of
from harness.report.merge import merge_reports
from harness.report.write import report_json
from harness.report.writers import write_reports
from harness.verdict.attribute import EVERY_CASE, GUESS, ONLY_RULE, attribute

ROOT = Path(__file__).resolve().parents[1]
RULES_TABLE = {
    "memfs-v1": RuleRow("memfs-v1", "memfs-v1 renders the Reminder line and <memory>", feature=True, line=1).to_json(),
    "metadata-block": RuleRow("metadata-block", "the <memory_metadata> block", feature=True, line=2).to_json(),
    "memfs-v2": RuleRow("memfs-v2", "a root MEMORY.md renders memfs-v2", feature=True, line=3).to_json(),
    "label-collation": RuleRow("label-collation", "labels sorted by localeCompare", line=4).to_json(),
    "js-trim-set": RuleRow("js-trim-set", "trim strips ECMAScript whitespace", line=5).to_json(),
    "bom-stripped": RuleRow("bom-stripped", "one leading BOM is stripped", line=6).to_json(),
}


@dataclass(frozen=True)
class Row:
    id: str
    feature: bool = False
    line: int = 1
    profiles: tuple[str, ...] = ()


ROWS = {rule_id: Row(rule_id, data["feature"], data["line"]) for rule_id, data in RULES_TABLE.items()}
OK = Outcome("ok", record=record("persona: helpful"))


def result(
    case_id: str,
    failed: bool,
    rules: tuple[str, ...],
    core: str = "x",
    reference: str = "persona: helpful",
    **extra: object,
) -> CaseResult:
    expected = Outcome("ok", record=record(reference))
    port = Outcome("ok", record=record(core)) if failed else expected
    made = case(case_id, Status.FAIL if failed else Status.PASS, ("frontmatter",), expected, port, **extra)
    return replace(made, rules=rules)


def v2_only_port() -> list[CaseResult]:
    """memfs-v1 and its metadata block missing: every v1 case fails, every v2 case passes."""
    rules = ("label-collation", "js-trim-set", "bom-stripped") * 3 + ("label-collation",)
    v1 = [result(f"v1-{n}", True, ("memfs-v1", "metadata-block", rule)) for n, rule in enumerate(rules)]
    v2 = [result(f"v2-{n}", False, ("memfs-v2", rule)) for n, rule in enumerate(("label-collation", "js-trim-set"))]
    return [*v1, *v2, result("metadata-only", True, ("metadata-block",))]


def planted_port() -> list[CaseResult]:
    """Collation and trim broken: their cases fail, under either layout, but for one trim case that only
    JavaScript's and Python's trim agree on; the BOM case passes."""
    return [
        result("collate-v1", True, ("memfs-v1", "metadata-block", "label-collation")),
        result("collate-v2", True, ("memfs-v2", "label-collation")),
        result("trim-v1", True, ("memfs-v1", "metadata-block", "js-trim-set")),
        result("trim-and-bom", True, ("memfs-v1", "metadata-block", "js-trim-set", "bom-stripped")),
        result("trim-v2", False, ("memfs-v2", "js-trim-set")),
        result("bom-v1", False, ("memfs-v1", "metadata-block", "bom-stripped")),
        result("plain-v1", False, ("memfs-v1", "metadata-block")),
        result("plain-v2", False, ("memfs-v2",)),
    ]


def test_a_missing_layout_is_one_entry_naming_the_features_that_fail_together_first_in_rules_order() -> None:
    entries = attribute(v2_only_port(), ROWS, cause_of)
    assert [(e.name, e.explains) for e in entries] == [("memfs-v1 + metadata-block", 11)]
    assert entries[0].rule == "memfs-v1" and entries[0].also == ("metadata-block",)


def test_each_broken_rule_is_named_with_the_failures_it_explains_most_explaining_first() -> None:
    entries = attribute(planted_port(), ROWS, cause_of)
    # both explain two failures; every case of label-collation fails, one of js-trim-set's passes: it comes second
    assert [(e.rule, e.explains) for e in entries] == [("label-collation", 2), ("js-trim-set", 2)]
    assert all(not e.also for e in entries)  # memfs-v1 passes elsewhere: no layout is blamed


def test_the_evidence_says_every_case_fails_only_rule_or_guess() -> None:
    results = [*planted_port(), result("collate-alone", True, ("label-collation",))]
    by_rule = {e.rule: e for e in attribute(results, ROWS, cause_of)}
    assert set(by_rule["label-collation"].evidence.values()) == {EVERY_CASE}  # all three of its cases fail
    trim = by_rule["js-trim-set"].evidence
    assert trim[("trim-v1", "0.32.18")] == ONLY_RULE  # its other rules are layout features
    assert trim[("trim-and-bom", "0.32.18")] == GUESS  # bom-stripped could be it too
    assert by_rule["js-trim-set"].guesses == 1


def test_a_case_naming_no_rule_is_grouped_by_its_cause_after_the_rules() -> None:
    results = [*planted_port(), result("unnamed", True, ())]
    entries = attribute(results, ROWS, cause_of)
    assert entries[-1].rule is None and entries[-1].cause == cause_of(results[-1])
    assert entries[-1].name.startswith("no rule: ")


def test_an_implementation_that_errors_on_everything_is_one_cause_not_a_rule() -> None:
    broken = Outcome("error", error="cmd:./port could not start: exit status 127")
    results = [
        replace(case(f"c{n}", Status.ERROR, (), OK, broken, reasons=["could not start"]), rules=("memfs-v1",))
        for n in range(3)
    ]
    entries = attribute(results, ROWS, cause_of)
    assert [(e.rule, e.explains) for e in entries] == [(None, 3)]


def test_a_rule_that_does_not_hold_under_the_results_profile_explains_nothing() -> None:
    rows = {**ROWS, "bun-pragma": Row("bun-pragma", profiles=("letta-code@0.25.3",))}
    results = [result("collate", True, ("label-collation", "bun-pragma")), result("other", False, ("label-collation",))]
    (entry,) = attribute(results, rows, cause_of)  # bun-pragma's only case fails, but not under 0.25.3's profile
    assert entry.rule == "label-collation" and entry.evidence[("collate", "0.32.18")] == ONLY_RULE


def test_not_applicable_results_never_count_as_failing_or_passing_a_rule() -> None:
    results = [
        *planted_port(),
        replace(result("collate-na", False, ("label-collation",)), status=Status.NOT_APPLICABLE),
    ]
    by_rule = {e.rule: e for e in attribute(results, ROWS, cause_of)}
    assert (by_rule["label-collation"].failing, by_rule["label-collation"].applicable) == (2, 2)


def test_the_representative_has_the_typical_difference_then_the_smallest_output() -> None:
    results = [
        result("big", True, ("label-collation",), core="y", reference="persona: " + "h" * 500),
        result("small", True, ("label-collation",), core="y", reference="persona: h"),
        result(
            "odd-one", True, ("label-collation",), core="", reference="p"
        ),  # smallest, but its difference is its own
    ]
    (entry,) = attribute(results, ROWS, cause_of)
    assert entry.representative.case_id == "small"


def test_implementations_are_attributed_apart() -> None:
    results = v2_only_port() + [replace(r, implementation="cmd:./planted") for r in planted_port()]
    entries = attribute(results, ROWS, cause_of)
    assert [(e.implementation, e.rule) for e in entries] == [
        ("python", "memfs-v1"),
        ("cmd:./planted", "label-collation"),
        ("cmd:./planted", "js-trim-set"),
    ]


def test_the_terminal_summary_names_each_rule_with_its_smallest_case_and_reproduce_command() -> None:
    entries = explain(planted_port(), RULES_TABLE)
    lines = explained_lines(entries, RULES_TABLE)
    assert lines[0] == "=== python: 4 failing results explained by 2 rules, most explaining first ==="
    assert lines[1] == "1. label-collation: explains 2 failures (every case fails; 2 of its 2 applicable results fail)"
    assert lines[2] == "  labels sorted by localeCompare"
    assert lines[3].startswith("  smallest: collate-v1 [0.32.18]: content byte 3: reference U+0070 LATIN SMALL")
    assert lines[4].startswith("  reproduce: conformance run cases/compile/collate-v1.yaml --reference npm:0.32.18")
    assert lines[5] == "2. js-trim-set: explains 2 failures (1 of them a guess; 2 of its 3 applicable results fail)"
    assert len(lines) == 1 + 2 * 4


def test_the_terminal_summary_lists_a_few_rules_and_says_how_many_more() -> None:
    results = [result(f"c{n}", True, (f"r{n}",)) for n in range(14)]
    table = {f"r{n}": RuleRow(f"r{n}", f"rule {n}").to_json() for n in range(14)}
    lines = explained_lines(explain(results, table), table, shown=10)
    assert len(lines) == 1 + 10 * 4 + 1
    assert lines[-1] == "... and 4 more rules or causes explaining 4 failing results (-v lists them all)"
    assert len(explained_lines(explain(results, table), table, shown=None)) == 1 + 14 * 4


def report_of(results: list[CaseResult]) -> RunReport:
    return RunReport(results, [], [], ["conformance", "run"], timing=False, extra={RULES: RULES_TABLE})


def test_report_json_carries_the_attribution_the_rules_it_names_and_each_failing_results_rule() -> None:
    data = json.loads(json.dumps(report_json(report_of(planted_port()))))
    schema = json.loads(Path("harness/report/schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    assert [(a["rule"], a["explains"], a["smallest"]["case"]) for a in data["attribution"]] == [
        ("label-collation", 2, "collate-v1"),
        ("js-trim-set", 2, "trim-and-bom"),
    ]
    assert sorted(data["rules"]) == [
        "bom-stripped",
        "js-trim-set",
        "label-collation",
        "memfs-v1",
        "memfs-v2",
        "metadata-block",
    ]
    assert data["rules"]["js-trim-set"]["statement"] == "trim strips ECMAScript whitespace"
    attributed = {r["case"]: r.get("attributed") for r in data["results"]}
    assert attributed["trim-and-bom"] == {"rule": "js-trim-set", "evidence": GUESS}
    assert attributed["plain-v1"] is None  # passing results are put on no rule
    assert data["cases"]["collate-v2"]["rules"] == ["memfs-v2", "label-collation"]


def test_only_each_rules_representative_keeps_its_long_values_so_bulk_follows_distinct_differences() -> None:
    long = [result(f"v1-{n}", True, ("memfs-v1", "metadata-block"), core="z" * (300 + n)) for n in range(6)]
    entries = explain(long, RULES_TABLE)
    full = shown_in_full(long, entries)
    data = report_json(report_of(long))
    kept = set(data["outputs"].values())
    for r in long:
        content = r.impl_outcome.record["content"]  # type: ignore[union-attr, index]
        assert (content in kept) == ((r.implementation, r.case_id, r.reference) in full)
    assert len(full) < len(long)


def test_index_html_opens_on_the_rules_each_linking_to_its_statement_and_failing_cases(tmp_path: Path) -> None:
    html = write_reports(report_of(planted_port()), tmp_path)["html"].read_text(encoding="utf-8")
    table = html[html.index('<table id="explained">') : html.index("</table>", html.index('<table id="explained">'))]
    assert html.index('id="explained"') < html.index('id="conformance"')  # the first screen
    assert table.index('data-rule="label-collation"') < table.index('data-rule="js-trim-set"')
    assert 'href="#explained-2"' in table and 'id="explained-2"' in html
    section = html[html.index('id="explained-2"') :]
    assert "trim strips ECMAScript whitespace" in section.split("</div>")[0]
    assert 'id="rule-js-trim-set"' in html and "trim-and-bom" in section.split("</div>")[0]


def test_a_merged_report_attributes_its_results_again_as_the_run_did(tmp_path: Path) -> None:
    write_reports(report_of(planted_port()), tmp_path / "run")
    merged = merge_reports([tmp_path / "run"], ["conformance", "merge-reports"])
    assert report_json(merged)["attribution"] == report_json(report_of(planted_port()))["attribution"]


def run_planted(tmp_path: Path, bug: str, reference: str, *selection: str) -> dict:
    """`conformance run SELECTION --reference REFERENCE` with tests/planted_rules_impl.py planting `bug`, from the
    repository root; the run must fail (exit 1). Its report.json."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [sys.executable, "-m", "harness.cli", "run", *selection, "--reference", reference]
    argv += ["--impl", f"cmd:python tests/planted_rules_impl.py --bugs {bug}", "--no-timing", "--report", str(tmp_path)]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 1, done.stderr[-3000:]
    return json.loads((tmp_path / "report.json").read_text())


@pytest.mark.integration
@pytest.mark.parametrize(
    ("reference", "rule"), [("npm:0.25.3", "memory-write-noop-message"), ("npm:0.30.28", "memory-write-noop-error")]
)
def test_a_write_tool_that_commits_a_no_op_is_named_as_the_no_op_rule_of_the_release(
    tmp_path: Path, release_bundle: object, reference: str, rule: str
) -> None:
    """tests/planted_rules_impl.py's `noop-commit` (an empty commit where upstream skips the write or throws)
    against a real release: only the no-op cases fail, and they are put on that release's no-op rule."""
    report = run_planted(
        tmp_path, "noop-commit", reference, "cases/ops", "-k", "write-str-replace or write-update-description"
    )
    failing = sorted(r["case"] for r in report["results"] if r["status"] == "fail")
    assert failing == ["write-str-replace-noop", "write-update-description-noop"]
    assert [(entry["rule"], entry["explains"]) for entry in report["attribution"]] == [(rule, 2)]


@pytest.mark.integration
@pytest.mark.parametrize("reference", ["npm:0.25.3", "npm:0.32.8"])
@pytest.mark.parametrize(
    ("bug", "rule", "failing"),
    [
        ("yaml-validator", "commit-hook-bash-values", ["validate-crlf-frontmatter"]),
        (
            "read-only-no-head",
            "commit-hook-read-only",
            [
                "validate-read-only-capitalised",
                "validate-read-only-changed",
                "validate-read-only-head-locks",
                "validate-read-only-quoted-true",
                "validate-read-only-removed",
            ],
        ),
    ],
)
def test_a_commit_validator_bug_is_named_as_the_hook_rule_it_breaks(
    tmp_path: Path, release_bundle: object, reference: str, bug: str, rule: str, failing: list[str]
) -> None:
    """tests/planted_rules_impl.py's validator bugs against the bash hook (0.25.3) and the node validators it runs
    (0.32.8): a YAML-correct reading accepts CRLF frontmatter the hook refuses, and read_only checks blind to HEAD
    let a locked file change; each fails only its cases and is put on its rule."""
    report = run_planted(tmp_path, bug, reference, "cases/ops", "-k", "validate-crlf or validate-read-only")
    assert sorted(r["case"] for r in report["results"] if r["status"] == "fail") == failing
    assert [(entry["rule"], entry["explains"]) for entry in report["attribution"]] == [(rule, len(failing))]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("bug", "rule", "failing"),
    [
        (
            "agent-info-repeated",
            "turn-reminders-agent-info-once",
            [
                "reminder-agent-info-first-turn-only",
                "reminder-agent-info-per-conversation",
                "reminder-clean-no-sync",
                "reminder-dirty-edit-next-turn",
                "reminder-merge-conflict-turns",
            ],
        ),
        (
            "reminder-same-turn",
            "turn-reminders-sync-next-turn",
            ["reminder-agent-info-per-conversation", "reminder-dirty-edit-next-turn", "reminder-merge-conflict-turns"],
        ),
    ],
)
def test_a_turn_reminder_bug_is_named_as_the_lifecycle_rule_it_breaks(
    tmp_path: Path, release_bundle: object, bug: str, rule: str, failing: list[str]
) -> None:
    """tests/planted_rules_impl.py's turn-reminder bugs against 0.30.28's own reminder engine and post-turn sync: the
    agent-info reminder repeated on every turn, and the sync's reminder carried on the turn that found the change
    instead of the next; each fails only its cases and is put on its rule. Every lifecycle case observes the
    reminders, so the run takes the reminder cases, and a compile case of the v1 layout they name, which passes
    (so the layout is not taken for missing)."""
    report = run_planted(tmp_path, bug, "npm:0.30.28", "cases/lifecycle", "cases/compile", "-k", "reminder- or fm-none")
    assert sorted(r["case"] for r in report["results"] if r["status"] == "fail") == failing
    assert [(entry["rule"], entry["explains"]) for entry in report["attribution"]] == [(rule, len(failing))]


@pytest.mark.integration
def test_a_model_stored_as_auto_is_named_as_the_default_switch_rule(tmp_path: Path, release_bundle: object) -> None:
    """tests/planted_rules_impl.py's `model-auto-stored` against 0.30.28's own LocalBackend: an agent created on
    `auto` and a model step naming `auto` keep the string where upstream switches to the default model; the two
    cases that ask for `auto` fail, the other model cases pass, and the failures are put on `model-default-switch`."""
    report = run_planted(tmp_path, "model-auto-stored", "npm:0.30.28", "cases/lifecycle", "-k", "model-")
    statuses = {r["case"]: r["status"] for r in report["results"]}
    assert sorted(case for case, status in statuses.items() if status == "fail") == [
        "model-default-handles",
        "model-open-default",
    ]
    assert len(statuses) > 2 and all(
        s == "pass" for c, s in statuses.items() if c not in ("model-default-handles", "model-open-default")
    )
    assert [(entry["rule"], entry["explains"]) for entry in report["attribution"]] == [("model-default-switch", 2)]
