"""harness.drift on fabricated reference outcomes: sections, grouping by change, explanations, stale ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.model import Explanation, FieldDiff, Outcome, Scenario
from harness.core.reference import ReferenceSpec
from harness.report.drift import drift_markdown
from harness.tools.releases.drift import changes, drift_report, neighbour_pairs, sections

ORDER = ["0.25.9", "0.30.28", "0.31.12"]
OLD_TEXT = "S\n\n<self>\nme\n</self>\n\n<memory>\n<a>x</a>\n<external_projection>\nâ\x80\x94 n.md\n</external_projection>\n</memory>\n\n<memory_metadata>\nm\n</memory_metadata>"  # noqa: E501
NEW_TEXT = OLD_TEXT.replace("â\x80\x94", "└──")


def record(text: str, core: bool = True, **more: str) -> Outcome:
    data = {"content": text, **({"coreMemory": text[3:]} if core else {}), "compiledAt": "t", "rawSystemHash": "h"}
    return Outcome("ok", record={**data, **more})


def case(case_id: str, *explains: Explanation) -> Scenario:
    return Scenario(case_id, "d", Path(f"cases/compile/{case_id}.yaml"), (), {}, {}, explains=explains)


def specs(*labels: str) -> list[ReferenceSpec]:
    return [ReferenceSpec.parse(label) for label in labels]


def test_sections_cut_a_prompt_into_its_blocks() -> None:
    cut = sections(OLD_TEXT)
    assert set(cut) == {"self", "external_projection", "memory_metadata", "system-tree", "prompt"}
    assert cut["self"] == "<self>\nme\n</self>"
    assert "<a>x</a>" in cut["system-tree"] and "<external_projection>" not in cut["system-tree"]
    assert cut["prompt"].startswith("S\n\n")


def test_changes_name_the_section_and_added_fields() -> None:
    assert changes(record(OLD_TEXT), record(OLD_TEXT)) == []
    assert changes(record(OLD_TEXT, core=False), record(NEW_TEXT)) == [
        "content/external_projection",
        "coreMemory (added)",
    ]
    assert changes(record(OLD_TEXT), Outcome("thrown", thrown="E")) == ["thrown (now throws)"]
    assert changes(Outcome("thrown", thrown="E"), Outcome("thrown", thrown="F")) == []


def test_neighbours_are_consecutive_releases_in_manifest_order_and_each_variant_after_its_baseline() -> None:
    pairs = neighbour_pairs(specs("npm:0.31.12", "npm:0.25.9", "npm:0.30.28", "npm:0.25.9@node"), ORDER)
    assert [(p.before.label, p.after.label, p.kind) for p in pairs] == [
        ("0.25.9", "0.30.28", "release"),
        ("0.30.28", "0.31.12", "release"),
        ("0.25.9", "0.25.9@node", "runtime"),
    ]


def test_a_change_is_explained_by_a_case_that_pins_it_and_covers_the_others_in_its_group() -> None:
    pinning = case(
        "pins-connectors",
        Explanation(
            "connectors decoded as UTF-8", since="0.30.28", fields=("content",), sections=("external_projection",)
        ),
    )
    other = case("also-changes")
    outcomes = {}
    for scenario in (pinning, other):
        outcomes[(scenario.id, "0.25.9")] = record(OLD_TEXT)
        outcomes[(scenario.id, "0.30.28")] = record(NEW_TEXT)
        outcomes[(scenario.id, "0.31.12")] = record(NEW_TEXT)
    report = drift_report(outcomes, [pinning, other], specs("npm:0.25.9", "npm:0.30.28", "npm:0.31.12"), ORDER)
    groups = {(g.pair.after.label, g.change): g for g in report.groups}
    assert set(groups) == {("0.30.28", "content/external_projection"), ("0.30.28", "coreMemory/external_projection")}
    explained = groups[("0.30.28", "content/external_projection")]
    assert explained.cases == ["also-changes", "pins-connectors"]
    assert explained.explained_by == {"pins-connectors": "connectors decoded as UTF-8"}
    assert [g.change for g in report.unexplained] == ["coreMemory/external_projection"]
    assert not report.ok
    text = drift_markdown(report.to_json())
    assert "UNEXPLAINED" in text and "  - connectors decoded as UTF-8 (`pins-connectors`)" in text
    assert "0.30.28 -> 0.31.12 (release): 0 case(s) changed" in text


def test_rules_by_release_name_where_each_rule_first_ran_and_where_its_output_changed() -> None:
    appears = Scenario("op-appears", "d", Path("cases/ops/op-appears.yaml"), (), {}, {}, rules=("late-rule",))
    steady = Scenario("steady", "d", Path("cases/compile/steady.yaml"), (), {}, {}, rules=("old-rule",))
    absent = Scenario("absent", "d", Path("cases/ops/absent.yaml"), (), {}, {}, rules=("never-rule",))
    skipped = Scenario("not-run", "d", Path("cases/ops/not-run.yaml"), (), {}, {}, rules=("unselected-rule",))
    unsupported = Outcome("unsupported", error="this release has no such op")
    outcomes = {
        ("op-appears", "0.25.9"): unsupported,
        ("op-appears", "0.30.28"): record(NEW_TEXT),
        ("op-appears", "0.31.12"): record(NEW_TEXT),
        **{("steady", v): record(NEW_TEXT) for v in ORDER},
        **{("absent", v): unsupported for v in ORDER},
    }
    report = drift_report(outcomes, [appears, steady, absent, skipped], specs(*(f"npm:{v}" for v in ORDER)), ORDER)
    rules = {r.rule: r for r in report.rules}
    assert set(rules) == {"late-rule", "old-rule", "never-rule"}  # a case the run did not hold names no rule
    assert rules["late-rule"].first == "0.30.28"
    assert [(c["from"], c["to"], c["cases"]) for c in rules["late-rule"].changes] == [
        ("0.25.9", "0.30.28", ["op-appears"])
    ]
    assert rules["old-rule"].first == "0.25.9" and rules["old-rule"].changes == []
    assert rules["never-rule"].first is None
    text = drift_markdown(report.to_json())
    assert "- `late-rule` (1 case(s)): first ran on 0.30.28; changed 0.25.9 -> 0.30.28 (" in text
    assert "- `never-rule` (1 case(s)): never ran (every reference unsupported)" in text


def test_an_explanation_whose_change_did_not_happen_is_stale() -> None:
    claims = case("claims", Explanation("said to change", since="0.31.12"))
    outcomes = {("claims", v): record(NEW_TEXT) for v in ORDER}
    report = drift_report(outcomes, [claims], specs(*(f"npm:{v}" for v in ORDER)), ORDER)
    assert report.groups == []
    assert [(s["case"], s["to"]) for s in report.stale] == [("claims", "0.31.12")]
    assert not report.ok


def test_since_matches_a_pair_that_skips_releases_and_runtime_entries_match_their_variant() -> None:
    pinned = case(
        "c",
        Explanation("x", since="0.30.28"),
        Explanation("node collates by LANG", runtime="node", locale="da_DK.UTF-8"),
    )
    outcomes = {
        ("c", "0.25.9"): record(OLD_TEXT),
        ("c", "0.31.12"): record(NEW_TEXT),
        ("c", "0.31.12@node/da_DK.UTF-8"): record(NEW_TEXT.replace("\nme\n", "\nmE\n")),
        ("c", "0.31.12@node"): record(NEW_TEXT),
    }
    report = drift_report(
        outcomes,
        [pinned],
        specs("npm:0.25.9", "npm:0.31.12", "npm:0.31.12@node/da_DK.UTF-8", "npm:0.31.12@node"),
        ORDER,
    )
    assert report.unexplained == [] and report.stale == []
    assert {(g.pair.after.label, g.change) for g in report.groups} == {
        ("0.31.12", "content/external_projection"),
        ("0.31.12", "coreMemory/external_projection"),
        ("0.31.12@node/da_DK.UTF-8", "content/self"),
        ("0.31.12@node/da_DK.UTF-8", "coreMemory/self"),
    }


def test_a_reference_that_could_not_run_is_listed_not_compared() -> None:
    outcomes = {("c", "0.25.9"): record(OLD_TEXT), ("c", "0.30.28"): Outcome("error", error="crash")}
    report = drift_report(outcomes, [case("c")], specs("npm:0.25.9", "npm:0.30.28"), ORDER)
    assert report.groups == [] and report.unknown == [{"case": "c", "from": "0.25.9", "to": "0.30.28"}]


def test_explains_entries_load_and_a_malformed_one_names_its_line(tmp_path: Path) -> None:
    from harness.cases.load import load_scenario
    from harness.core.model import ScenarioError

    head = 'id: s\ndescription: d\nrepo:\n  commits:\n    - files:\n        a.md: "a\\n"\nexplains:\n'
    good = tmp_path / "s.yaml"
    good.write_text(
        head + '  - {since: "0.30.28", fields: [content], sections: [external_projection], change: x}\n'
        "  - {runtime: node, locale: da_DK.UTF-8, change: y}\n"
    )
    loaded = load_scenario(good)
    assert loaded.explains == (
        Explanation("x", since="0.30.28", fields=("content",), sections=("external_projection",)),
        Explanation("y", runtime="node", locale="da_DK.UTF-8"),
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text(head + "  - {change: neither since nor runtime}\n")
    with pytest.raises(ScenarioError) as error:
        load_scenario(bad)
    assert error.value.line == 8 and "explains/0" in str(error.value)


def test_a_system_label_named_memory_stays_inside_the_system_tree() -> None:
    tree = "<memory>\n<memory>\n  inner\n</memory>\n<b>\n  b\n</b>\n</memory>"
    text = f"S\n\n{tree}\n\n<memory_metadata>\nm\n</memory_metadata>"
    moved = text.replace("<memory>\n  inner\n</memory>\n<b>\n  b\n</b>", "<b>\n  b\n</b>\n<memory>\n  inner\n</memory>")
    assert sections(text)["prompt"] == "S\n\n\0memory\0\n\n\0memory_metadata\0"
    assert changes(record(text), record(moved)) == ["content/system-tree", "coreMemory/system-tree"]


def test_drift_read_from_a_saved_report_describes_a_passing_change_as_a_live_run_does(tmp_path: Path) -> None:
    from harness.core.model import CaseResult, RunReport, Status
    from harness.report.writers import write_reports
    from harness.tools.releases.drift import described
    from harness.tools.releases.matrix import outcomes_from_report, reference_outcomes

    padding = "\n" + "memory line\n" * 30  # over report.stored.SHARED_CHARS: stored by digest
    results = []
    for label, text in (
        ("0.25.9", OLD_TEXT + padding),
        ("0.30.28", NEW_TEXT + padding),
        ("0.31.12", NEW_TEXT + padding),
    ):
        outcome = record(text, core=label != "0.25.9")  # 0.25.x has no coreMemory
        results.append(
            CaseResult(
                "connectors",
                label,
                f"letta-code@{label}",
                Status.PASS,
                (),
                "cases/compile/c.yaml",
                reference_outcome=outcome,
                impl_outcome=outcome,
            )
        )
    scenarios, labels = [case("connectors")], specs("0.25.9", "0.30.28", "0.31.12")
    live = drift_report(reference_outcomes(results), scenarios, labels, ORDER)
    directory = write_reports(RunReport(results, [], [], ["conformance", "matrix"], timing=False), tmp_path)["json"]
    saved = drift_report(outcomes_from_report(json.loads(directory.read_text())), scenarios, labels, ORDER)
    assert saved.to_json() == live.to_json() and drift_markdown(saved.to_json()) == drift_markdown(live.to_json())
    assert [g.change for g in saved.groups] == ["content/external_projection", "coreMemory (added)"]
    assert "$output" not in json.dumps(saved.to_json())  # every change by its bytes, none by a digest
    group = saved.groups[0]
    first = group.to_json()["first_difference"]
    assert first["case"] == "connectors" and first["field"] == "content/external_projection"
    assert first["offset"] == len(b"<external_projection>\n") and "$output" not in json.dumps(first)
    assert "└──" in first["after_context"] and "â" in first["before_context"]
    assert first["difference"] == described(FieldDiff("x", "â", "└", 0))["difference"]


def test_a_section_change_is_described_with_the_blocks_cut_out_of_it_named_not_as_markers() -> None:
    from harness.tools.releases.drift import change_details, described

    details = dict(change_details(record(OLD_TEXT), record(OLD_TEXT.replace("S\n\n", "T\n\n", 1))))
    first = described(details["content/prompt"])
    assert first["offset"] == 0 and "\0" not in first["before_context"] + first["after_context"]
    assert "<self>…</self>" in first["before_context"] and "<memory>…</memory>" in first["after_context"]
