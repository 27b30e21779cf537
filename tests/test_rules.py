"""cases/rules.yaml and the cases tied to it: every case names a rule, every rule is named by a case, every
named id exists (the loader refuses others at their line); rules.yaml's own refusals; needed_features, the one
place that decides which layout features a case needs under a profile, against what the port renders for
every compile case; docs/quirks.md's table names rules that exist."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.acquire.pypi_release import APP
from harness.acquire.releases import cache_root
from harness.cases.load import DEFAULT_INPUTS, load_scenario, load_scenarios
from harness.cases.rules import (
    FEATURES,
    RULES_FILE,
    Rule,
    case_counts,
    corpus_rules,
    holds_for,
    load_rules,
    needed_features,
    rules_of_cases,
    unnamed_rules_note,
)
from harness.cli.main import main
from harness.core.model import CompileRequest, Scenario, ScenarioError
from harness.repo.build import materialize_repo
from harness.run.lifecycle import Probe, run_side, wire_steps
from harness.run.session import build_request
from harness.runners.python_port import PythonPortRunner
from letta_profiles import DEFAULT_RELEASE, PROFILE_NAMES, profile_name_for_release, resolve_profile_name
from memfs_prompt.compiler import one_reading_of_head

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT / "cases"
V2_PROFILES = ("letta-code@0.33.3", "letta-code@0.33.6", "letta-code@0.34.1", "letta-code@0.34.7", "spec-v2")


@pytest.fixture(scope="module")
def corpus() -> list[Scenario]:
    loaded = load_scenarios([CORPUS])
    assert not loaded.errors, [str(e) for e in loaded.errors]
    return loaded.scenarios


@pytest.fixture(scope="module")
def rules() -> dict[str, Rule]:
    found = corpus_rules(CORPUS)
    assert found is not None, f"{CORPUS / RULES_FILE} is missing"
    return found


# --- the corpus and its rules, both ways ------------------------------------------------------------


def test_every_case_names_at_least_one_rule(corpus: list[Scenario]) -> None:
    unnamed = [s.id for s in corpus if not s.rules]
    assert unnamed == [], "name the rules each pins: `rules: [ID, ...]` (cases/rules.yaml; docs/cases.md, Rules)"


def test_every_rule_is_named_by_at_least_one_case(corpus: list[Scenario], rules: dict[str, Rule]) -> None:
    assert [rule_id for rule_id, count in case_counts(corpus, rules).items() if count == 0] == []


def test_every_rule_a_case_names_exists(corpus: list[Scenario], rules: dict[str, Rule]) -> None:
    assert {(s.id, r) for s in corpus for r in s.rules if r not in rules} == set()


def test_every_rule_a_case_names_holds_under_a_profile_the_case_runs_under(
    corpus: list[Scenario], rules: dict[str, Rule]
) -> None:
    """A case cannot exercise a rule that holds under none of its profiles (`profiles`, a golden case's own)."""
    for case in corpus:
        golden = case.golden or (case.expect or {}).get("profile")
        profiles = [golden] if golden else [resolve_profile_name(p) for p in case.profiles] or list(PROFILE_NAMES)
        assert [r for r in case.rules if not any(holds_for(rules[r], p) for p in profiles)] == [], case.id


def test_the_layout_features_are_rules_of_the_corpus(rules: dict[str, Rule]) -> None:
    assert sorted(r.id for r in rules.values() if r.feature) == sorted(FEATURES)
    assert rules["memfs-v2"].profiles == V2_PROFILES and rules["memfs-v2"].otherwise == ("memfs-v1", "metadata-block")
    for rule_id in ("replace-all-dollar-patterns", "core-memory-appended", "skills-list-order"):
        assert rule_id in rules


def test_each_rule_says_what_upstream_does_where_and_which_port_function_does_it(rules: dict[str, Rule]) -> None:
    for rule in rules.values():
        assert rule.statement and rule.upstream and rule.port.startswith("memfs_prompt."), rule.id
        assert set(rule.profiles) <= set(PROFILE_NAMES), rule.id


def test_each_rule_s_port_functions_exist(rules: dict[str, Rule]) -> None:
    for rule in rules.values():
        for dotted in re.findall(r"\bmemfs_prompt(?:\.\w+)+", rule.port):
            module, _, rest = dotted.partition(".")
            target: object = importlib.import_module(module)
            for part in rest.split("."):
                target = getattr(target, part, None) or importlib.import_module(f"{target.__name__}.{part}")  # type: ignore[attr-defined]
            assert callable(target) or inspect.ismodule(target), (rule.id, dotted)


def test_each_rule_s_upstream_functions_are_in_the_default_release(rules: dict[str, Rule]) -> None:
    """Every function a rule holding under the default release's profile names is in that release's bundle."""
    bundle = cache_root() / "pypi" / DEFAULT_RELEASE / APP / "letta.js"
    if not bundle.is_file():
        pytest.skip(f"{bundle} is not cached (conformance run fetches it)")
    identifiers = set(re.findall(r"\b[a-z]+[A-Z]\w*\b", bundle.read_text(encoding="utf-8", errors="replace")))
    default = profile_name_for_release(DEFAULT_RELEASE)
    missing = {
        (rule.id, name)
        for rule in rules.values()
        if holds_for(rule, default)
        for name in re.findall(r"\b[a-z]+[A-Z]\w*\b", rule.upstream)
        if name not in identifiers
    }
    assert missing == set()


# --- the loader ------------------------------------------------------------------------------------


def corpus_with(tmp_path: Path, rules_text: str, case_text: str, kind: str = "compile") -> Path:
    (tmp_path / RULES_FILE).write_text(rules_text, encoding="utf-8")
    path = tmp_path / kind / "c.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case_text, encoding="utf-8")
    return path


RULES = """rules:
  - id: label-collation
    statement: s
    upstream: u
    port: memfs_prompt.collation.locale_compare_key
  - id: memfs-v1
    feature: true
    statement: s
    upstream: u
    port: memfs_prompt.render_v1.render_memfs_v1
"""


def test_an_unknown_rule_id_in_a_case_is_refused_at_its_line_with_the_nearest_one(tmp_path: Path) -> None:
    path = corpus_with(tmp_path, RULES, "id: c\ndescription: d\nrules:\n  - memfs-v1\n  - label-colation\nrepo: {}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:5: ")
    assert "unknown rule 'label-colation'; did you mean 'label-collation'?" in str(info.value)


def test_cases_without_their_corpus_rules_are_not_checked(tmp_path: Path) -> None:
    """A case elsewhere, or cases copied into a folder of their own without rules.yaml, name rules nothing can
    check; they still load (docs/cases.md)."""
    path = tmp_path / "c.yaml"
    path.write_text("id: c\ndescription: d\nrules: [anything]\nrepo: {}\n", encoding="utf-8")
    assert load_scenario(path).rules == ("anything",)
    copied = tmp_path / "cases" / "compile" / "c.yaml"
    copied.parent.mkdir(parents=True)
    copied.write_bytes(path.read_bytes())
    assert load_scenario(copied).rules == ("anything",)


def test_rules_yaml_is_no_case_and_a_bad_one_is_one_error_for_the_whole_corpus(tmp_path: Path) -> None:
    corpus_with(tmp_path, RULES, "id: c\ndescription: d\nrules: [memfs-v1]\nrepo: {}\n")
    (tmp_path / "compile" / "d.yaml").write_text("id: d\ndescription: d\nrules: [memfs-v1]\nrepo: {}\n")
    assert [s.id for s in load_scenarios([tmp_path]).scenarios] == ["c", "d"]
    (tmp_path / RULES_FILE).write_text(RULES.replace("    statement: s\n", "", 1), encoding="utf-8")
    errors = load_scenarios([tmp_path]).errors
    assert len(errors) == 1 and str(errors[0]).startswith(f"{tmp_path / RULES_FILE}:2: ")


def test_pytest_collects_cases_and_not_rules_yaml() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", "cases"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "rules.yaml" not in done.stdout, done.stdout + done.stderr
    assert f"{len(list(CORPUS.glob('*/*.yaml')))} tests collected" in done.stdout


def test_the_rules_of_cases_come_from_their_one_corpus(tmp_path: Path, corpus: list[Scenario]) -> None:
    assert rules_of_cases(corpus[:3]) is corpus_rules(CORPUS), "read once per corpus root"
    other = corpus_with(tmp_path, RULES, "id: c\ndescription: d\nrules: [memfs-v1]\nrepo: {}\n")
    assert rules_of_cases([load_scenario(other)]) == load_rules(tmp_path / RULES_FILE)
    with pytest.raises(ValueError, match="these cases come from 2 corpora"):
        rules_of_cases([corpus[0], load_scenario(other)])
    assert rules_of_cases([scenario(())]) is None


def refused_rules(tmp_path: Path, text: str) -> str:
    path = tmp_path / RULES_FILE
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_rules(path)
    assert str(info.value).startswith(f"{path}:{info.value.line}: "), "every refusal names file:line"
    return str(info.value)


def test_rules_yaml_refuses_an_unknown_profile_with_the_nearest_name(tmp_path: Path) -> None:
    text = RULES.replace(
        "    port: memfs_prompt.collation", "    profiles: [letta-code@0.33.4]\n    port: memfs_prompt.collation"
    )
    assert ":5: rule 'label-collation': unknown profile 'letta-code@0.33.4'; did you mean" in refused_rules(
        tmp_path, text
    )


def test_rules_yaml_refuses_a_rule_given_twice(tmp_path: Path) -> None:
    text = RULES + RULES.removeprefix("rules:\n")
    assert "rule 'label-collation' is given twice (line 2)" in refused_rules(tmp_path, text)


def test_rules_yaml_refuses_features_that_are_not_the_six(tmp_path: Path) -> None:
    assert "drop `feature: true`" in refused_rules(
        tmp_path, RULES.replace("  - id: label-collation\n", "  - id: label-collation\n    feature: true\n")
    )
    assert "mark it `feature: true`" in refused_rules(tmp_path, RULES.replace("    feature: true\n", ""))


def test_rules_yaml_refuses_an_otherwise_that_is_no_feature_or_can_never_apply(tmp_path: Path) -> None:
    holds = "    feature: true\n    profiles: [letta-code@0.33.3]\n"
    text = RULES.replace("    feature: true\n", holds + "    otherwise: [label-collation]\n")
    assert "otherwise 'label-collation'" in refused_rules(tmp_path, text)
    text = RULES.replace("    feature: true\n", "    feature: true\n    otherwise: [metadata-block]\n")
    assert "holds for every profile, so its `otherwise` never applies" in refused_rules(tmp_path, text)
    text = RULES.replace(
        "    port: memfs_prompt.collation", "    models: {letta-code@0.33.3: [m]}\n    port: memfs_prompt.collation"
    )
    assert "only a feature has `models`" in refused_rules(tmp_path, text)


# --- needed_features -------------------------------------------------------------------------------


def scenario(rules: tuple[str, ...], **fields: object) -> Scenario:
    return Scenario(
        id="c", description="d", path=Path("c.yaml"), tags=(), inputs=DEFAULT_INPUTS, repo={}, rules=rules, **fields
    )  # type: ignore[arg-type]


def test_a_root_memory_md_needs_memfs_v2_from_0_33_3_and_the_v1_layout_before(rules: dict[str, Rule]) -> None:
    case = scenario(("v2-root-blocks", "memfs-v2"))
    for profile in PROFILE_NAMES:
        expected = {"memfs-v2"} if profile in V2_PROFILES else {"memfs-v1", "metadata-block"}
        assert needed_features(case, profile, rules) == expected, profile
    assert needed_features(case, "letta-code@0.34.12", rules) == {"memfs-v2"}, "a release names its profile"


def test_a_plain_v1_repository_needs_memfs_v1_under_every_profile(rules: dict[str, Rule]) -> None:
    case = scenario(("system-tree-render", "memfs-v1", "metadata-block"))
    answers = {frozenset(needed_features(case, p, rules)) for p in PROFILE_NAMES}
    assert answers == {frozenset({"memfs-v1", "metadata-block"})}


def test_include_memfs_false_needs_no_layout_but_0_25_3_ignores_it(rules: dict[str, Rule]) -> None:
    case = scenario(("include-memfs-false", "metadata-block"))
    assert needed_features(case, "letta-code@0.25.9", rules) == {"metadata-block"}
    assert needed_features(case, "letta-code@0.25.3", rules) == {"memfs-v1", "metadata-block"}


def test_memory_update_before_0_32_14_is_needed_only_on_the_opus_model(rules: dict[str, Rule]) -> None:
    default, opus = scenario(("memory-update",)), scenario(("memory-update",), model="anthropic/claude-opus-4-8")
    switched = scenario(("memory-update",), steps=({"turn": "a"}, {"model": "anthropic/claude-opus-4-8"}))
    assert needed_features(default, "letta-code@0.31.12", rules) == set()
    assert (
        needed_features(opus, "letta-code@0.31.12", rules)
        == needed_features(switched, "letta-code@0.30.28", rules)
        == {"memory-update"}
    )
    assert needed_features(default, "letta-code@0.32.14", rules) == {"memory-update"}
    assert needed_features(default, "letta-code@0.25.9", rules) == set()


def test_the_implementation_default_profile_needs_every_feature_named(rules: dict[str, Rule]) -> None:
    assert needed_features(scenario(("memfs-v2", "label-collation")), None, rules) == {"memfs-v2"}
    assert holds_for(rules["skills-list-order"], None)


def _projection_shown(record: dict[str, object], client_skills: object) -> set[str]:
    """The layout features a compile record shows: the v1 Reminder line, a v2 projection (anything besides the
    metadata without the Reminder), the metadata block, a rendered skills block, the systemPromptWithSkills field."""
    core = str(record.get("coreMemory", record["content"]))
    shown = {"metadata-block"} if "<memory_metadata>" in core else set()
    projection = core.split("<memory_metadata>")[0].strip()
    if "Reminder: <projection>" in core:
        shown.add("memfs-v1")
    elif projection and "coreMemory" in record:
        shown.add("memfs-v2")
    if "<available_skills>" in str(record.get("systemPromptWithSkills", "")):
        shown.add("skills-block")
    if client_skills is not None:
        shown.add("client-skills")
    return shown


def _feature_boundaries(rules: dict[str, Rule]) -> list[str]:
    """One profile for each distinct answer of the rules that decide features (feature rules, `otherwise`)."""
    deciding = [r for r in rules.values() if r.feature or r.otherwise]
    firsts: dict[tuple[bool, ...], str] = {}
    for profile in PROFILE_NAMES:
        firsts.setdefault(tuple(holds_for(r, profile) for r in deciding), profile)
    return list(firsts.values())


def test_needed_features_are_what_the_port_renders_for_every_compile_case(
    corpus: list[Scenario], rules: dict[str, Rule]
) -> None:
    """The check that ties the cases' feature rules to the corpus: under one profile of each feature boundary,
    every feature a compile case's record shows is needed, and every needed feature shows, except the layout that
    decided an empty projection (a root MEMORY.md over 1 MiB: nothing renders, and the layout said so)."""
    profiles = _feature_boundaries(rules)
    assert {"letta-code@0.25.3", "letta-code@0.25.9", "letta-code@0.33.3"} <= set(profiles)
    runners = [PythonPortRunner(profile) for profile in profiles]
    problems = []
    for case in corpus:
        if case.kind != "compile":
            continue
        request = build_request(case, materialize_repo(case, cache_root()))  # the corpus's repositories, as a run's
        with one_reading_of_head():
            for runner in runners:
                profile = runner.profile.name
                if not case.profiles or profile in case.profiles:
                    problem = _layout_problem(case, profile, runner, request, rules)
                    problems += [problem] if problem else []
    assert problems == [], "\n".join(problems)


def _layout_problem(
    case: Scenario, profile: str, runner: PythonPortRunner, request: CompileRequest, rules: dict[str, Rule]
) -> str | None:
    outcome = runner.compile(request)
    if outcome.status == "thrown":  # an Invalid Date throws after rendering: look at what it rendered
        outcome = runner.compile(dataclasses.replace(request, now=DEFAULT_INPUTS["now"]))
    needed = needed_features(case, profile, rules)
    if outcome.status == "thrown":  # the system/** walk threw: only the v1 layout was rendering
        shown = {"memfs-v1"}
    else:
        assert outcome.record is not None, (case.id, outcome)
        shown = _projection_shown(outcome.record, case.client_skills)
    unshown, layouts = needed - shown, {"memfs-v1", "memfs-v2"}
    decided_empty = not shown & layouts and len(unshown & layouts) == 1 and unshown <= layouts
    if shown - needed or (unshown and not decided_empty):
        return f"{case.id} under {profile}: needs {sorted(needed)}, renders {sorted(shown)}"
    return None


#: Where a lifecycle case names a feature its port replay under a profile does not show, and why that is right.
AGENT_FREE_GETS_NO_UPDATE = (
    "before 0.33.6 the commit reaches the agent's conversation as an update; from 0.33.6 the turns after it run in "
    "the agent-free conversation, which gets none (a feature needed under some profiles of a rule that holds under "
    "all of them is named once)"
)
SHOWS_LESS = {
    ("agent-free-conversation", "letta-code@0.33.6"): AGENT_FREE_GETS_NO_UPDATE,
    ("agent-free-conversation", "letta-code@0.34.1"): AGENT_FREE_GETS_NO_UPDATE,
    ("agent-free-conversation", "letta-code@0.34.7"): AGENT_FREE_GETS_NO_UPDATE,
}


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _texts(item)]


def test_needed_features_are_what_the_port_shows_for_every_lifecycle_case(
    corpus: list[Scenario], rules: dict[str, Rule], tmp_path: Path
) -> None:
    """The same tie for the lifecycle probes, under every profile: the port's replay shows a `<memory_update>`,
    an `<available_skills>` block, the v1 Reminder line, `<memory_metadata>`, a v2 `<memory>` exactly where
    needed_features says (memory-update before 0.32.14 only on the opus model)."""
    marks = {
        "memory-update": "<memory_update>",
        "skills-block": "<available_skills>",
        "memfs-v1": "Reminder: <projection>",
        "metadata-block": "<memory_metadata>",
    }
    problems = []
    for case in (c for c in corpus if c.kind == "lifecycle"):
        built = materialize_repo(case, cache_root())
        for profile in PROFILE_NAMES:
            if (case.profiles and profile not in case.profiles) or (case.golden and profile != case.golden):
                continue
            probe = Probe(case, wire_steps(case), built, tmp_path, cache_root(), profile)
            texts = [
                t for record in run_side(probe, PythonPortRunner(profile), "impl", 0).records for t in _texts(record)
            ]
            shown = {feature for feature, mark in marks.items() if any(mark in t for t in texts)}
            shown |= {"memfs-v2"} if any("<memory>" in t and marks["memfs-v1"] not in t for t in texts) else set()
            needed = needed_features(case, profile, rules)
            if shown != needed and not (shown < needed and (case.id, profile) in SHOWS_LESS):
                problems.append(f"{case.id} under {profile}: needs {sorted(needed)}, shows {sorted(shown)}")
    assert problems == [], "\n".join(problems)


# --- conformance list ----------------------------------------------------------------------------


def test_list_shows_each_case_s_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(CORPUS / "compile" / "fm-none.yaml")]) == 0
    assert capsys.readouterr().out.split("\t")[3] == "frontmatter-body-trim,memfs-v1,metadata-block"


def test_list_rules_counts_the_selected_cases_naming_each_rule(
    corpus: list[Scenario], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--rules", str(CORPUS)]) == 0
    captured = capsys.readouterr()
    rows = {line.split("\t")[0]: line.split("\t") for line in captured.out.splitlines()}
    assert rows["memfs-v2"][1:4] == [
        str(sum("memfs-v2" in s.rules for s in corpus)),
        "feature",
        "0.33.3,0.33.6,0.34.1,0.34.7,spec-v2",
    ]
    assert rows["js-trim-set"][2:4] == ["rule", "all"]
    assert f"rules (6 features) named by {len(corpus)} cases; cases per rule: min 1" in captured.err
    assert main(["list", "--rules", str(CORPUS), "-k", "fm-none"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split("\t")[:2] == ["memfs-v1", "1"]


def test_list_rules_without_a_rules_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "compile").mkdir()
    (tmp_path / "compile" / "c.yaml").write_text("id: c\ndescription: d\nrepo: {}\n", encoding="utf-8")
    assert main(["list", "--rules", str(tmp_path)]) == 2
    assert "no rules.yaml beside the cases' compile/ and lifecycle/ folders" in capsys.readouterr().err


# --- docs/quirks.md -------------------------------------------------------------------------------


def test_every_quirk_row_names_rules_that_exist(rules: dict[str, Rule]) -> None:
    """docs/quirks.md's table stays the prose (how each quirk was measured); its first column names the rules."""
    text = (PROJECT / "docs" / "quirks.md").read_text(encoding="utf-8")
    table = text.split("| rule | quirk |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    assert len(table) >= 25
    for row in table:
        named = re.findall(r"`([a-z0-9.-]+)`", row.split("|")[1])
        assert named, f"a quirks.md row names no rule: {row[:80]}"
        assert [r for r in named if r not in rules] == [], row[:80]


def test_the_corpus_case_files_keep_rules_beside_tags() -> None:
    """`rules:` is written right after `tags:`, so a case's labels read together (docs/cases.md)."""
    for path in sorted(CORPUS.glob("*/*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        tags = next(n for n, line in enumerate(lines) if line.startswith("tags:"))
        assert lines[tags + 1].startswith("rules: ["), path
        assert yaml.safe_load(lines[tags + 1])["rules"], path


def test_a_case_written_without_rules_into_a_corpus_with_rules_is_told_what_to_add(tmp_path: Path) -> None:
    """add-case, reduce and fuzz write cases that name no rule (what a shrunk repository pins is for its reader
    to say): into a corpus with rules.yaml each prints this note, since tests/test_rules.py would refuse the case."""
    case = tmp_path / "cases" / "compile" / "fuzz-7.yaml"
    case.parent.mkdir(parents=True)
    assert unnamed_rules_note(case) is None  # no rules file: nothing to name
    (tmp_path / "cases" / RULES_FILE).write_text("rules: []\n", encoding="utf-8")
    note = unnamed_rules_note(case)
    assert note is not None and f"add `rules: [ID, ...]` to {case}" in note and "conformance list --rules" in note
    assert unnamed_rules_note(case, ["memfs-v1"]) is None
