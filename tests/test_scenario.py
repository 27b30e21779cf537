"""harness.cases.load: a bad scenario file is reported with its path, the line at fault and how to fix it,
and never stops the good files from loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.load import DEFAULT_INPUTS, load_scenario, load_scenarios
from harness.core.model import ScenarioError, Status

GOOD = 'id: good-one\ndescription: fine\nrepo:\n  commits:\n    - files:\n        a.md: "x"\n'


def write(directory: Path, name: str, data: str | bytes) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def load_error(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value


def test_invalid_yaml_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "# comment\nid: bad-yaml\ndescription: a: b\nrepo: {}\n")
    error = load_error(path)
    assert (error.path, error.line) == (path, 3)
    assert str(error).startswith(f"{path}:3: invalid YAML")


HEAD = "id: bad\ndescription: d\n"
YAML_MISTAKES = [
    # (the file, the line to blame, what the message says: plain words and the fix, never PyYAML's token names)
    (HEAD + "pins: a: b\nrepo: {}\n", 3, 'a second `: ` on this line: quote the value (`key: "a: b"`)'),
    (HEAD + "repo:\n\tcommits: []\n", 4, "a tab character: YAML indents with spaces only"),
    (HEAD + 'pins: "open\nrepo: {}\n', 3, "a quoted value is not closed: add its closing quote"),
    (HEAD + "tags: [basic\nrepo: {}\n", 4, "the `[` opened on line 3 is not closed before this: add `]`"),
    (HEAD + "repo:\n  commits: []\n   kind: git\n", 5, "this line's indentation does not fit the lines above it"),
    (HEAD + 'pins: "a" b\nrepo: {}\n', 3, "more text after a value's end (a closing quote, `]` or `}`) on this line"),
    (HEAD + "pins: @x\nrepo: {}\n", 3, "a plain value cannot start with @: quote the value"),
    (HEAD + 'pins: "a\\qb"\nrepo: {}\n', 3, '\\q is no escape in a "double-quoted" value: double the backslash'),
    (HEAD + "pins: *x\nrepo: {}\n", 3, "`*x` reads as a YAML alias: quote the value ('*x')"),
    (HEAD + "repo:\n  commits:\n    - files:\n        a.md: |\n  text\n", 7, "this line is neither `key: value` nor"),
]


@pytest.mark.parametrize(("text", "line", "says"), YAML_MISTAKES, ids=[m[2][:30] for m in YAML_MISTAKES])
def test_a_yaml_syntax_error_says_in_plain_words_what_is_wrong_on_which_line_and_the_fix(
    tmp_path: Path, text: str, line: int, says: str
) -> None:
    error = load_error(write(tmp_path, "bad.yaml", text))
    assert error.line == line, str(error)
    assert f"bad.yaml:{line}: invalid YAML: {says}" in str(error)
    assert not any(token in str(error) for token in ("<block", "<scalar>", "<stream", "token", "scanning")), str(error)


def test_a_misspelt_key_is_named_as_unknown_with_the_nearest_key_before_the_key_it_misses(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "misspelt.yaml", "id: misspelt\ndescripton: d\nrepo: {}\n"))
    assert error.line == 2
    assert "misspelt.yaml:2: unknown key 'descripton'; did you mean 'description'?" in str(error)
    assert "required" not in str(error)


def test_unknown_top_level_key_names_its_line_and_says_to_remove_it(tmp_path: Path) -> None:
    path = write(tmp_path, "unknown.yaml", "id: unk\ndescription: d\nrepo: {}\n\ncolour: red\n")
    error = load_error(path)
    assert "'colour'" in str(error)
    assert "remove it" in str(error)
    assert error.line == 5, str(error)  # the line of `colour:`, not of the mapping that holds it


def test_unknown_nested_key_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "unknown.yaml", "id: unk\ndescription: d\nrepo:\n  commits: []\n  colour: red\n")
    error = load_error(path)
    assert "'colour'" in str(error) and "repo" in str(error)
    assert error.line == 5, str(error)


def test_wrong_enum_value_names_its_line_and_the_allowed_values(tmp_path: Path) -> None:
    path = write(tmp_path, "enum.yaml", "id: enum\ndescription: d\nrepo:\n  kind: svn\n")
    error = load_error(path)
    assert error.line == 4
    assert str(error).startswith(f"{path}:4: repo/kind:")
    assert "'svn'" in str(error) and "'unborn'" in str(error) and "schema.json" in str(error)


def test_wrong_divergence_field_enum_is_rejected(tmp_path: Path) -> None:
    text = (
        "id: div\ndescription: d\nrepo: {}\ndivergences:\n  - references: ['*']\n    fields: [contents]\n"
        "    kind: upstream-bug\n    reason: r\n"
    )
    error = load_error(write(tmp_path, "div.yaml", text))
    assert error.line == 6 and "'contents'" in str(error)


def divergence_case(tmp_path: Path, reference: str) -> Path:
    text = (
        f"id: div\ndescription: d\nrepo: {{}}\ndivergences:\n  - references: [{reference!r}]\n"
        "    fields: [coreMemory]\n    kind: upstream-bug\n    reason: r\n"
    )
    return write(tmp_path, "div.yaml", text)


@pytest.mark.parametrize(
    ("written", "label"),
    [
        ("0.34.12", "pypi:0.34.12"),
        ("pypi:0.34.12", "pypi:0.34.12"),
        ("letta-code@0.34.12", "pypi:0.34.12"),
        ("0.32.18", "0.32.18"),
        ("npm:0.32.18", "0.32.18"),
        ("pypi:0.32.18", "pypi:0.32.18"),
        ("npm:0.32.18@node", "0.32.18@node"),
        ("0.34.12@node/da_DK.UTF-8", "pypi:0.34.12@node/da_DK.UTF-8"),
        ("golden", "golden"),
    ],
)
def test_a_divergence_names_a_reference_as_reference_does_and_matches_its_results(
    tmp_path: Path, written: str, label: str
) -> None:
    """`references: ["0.34.12"]` is the reference `--reference 0.34.12` runs, whose results are `pypi:0.34.12`."""
    from harness.verdict.judge import divergence_verdict

    scenario = load_scenario(divergence_case(tmp_path, written))
    assert scenario.divergences[0].references == (label,)
    assert divergence_verdict(scenario, label, set())[0] == Status.STALE  # its stale check is on: it no longer differs


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("0.34.21", "'0.34.21' is not a pinned release; did you mean 0.34.12? (pinned: npm:0.25.3,"),  # a typo
        ("pypi:0.32.17", "`conformance pin pypi:0.32.17`"),  # 0.32.17 is pinned on npm only
        ("9.9.9@node", "'9.9.9@node' is not a pinned release"),
        ("letta-server@0.16.8", "--impl letta-server:0.16.8; what it does differently goes in its expectations file"),
        ("letta-server:0.16.8", "--impl letta-server:0.16.8; what it does differently goes in its expectations file"),
        ("pnpm:0.34.12", "use VERSION, npm:VERSION, pypi:VERSION"),
    ],
)
def test_a_divergence_naming_no_pinned_reference_is_refused_at_its_line(
    tmp_path: Path, written: str, says: str
) -> None:
    """It would match no result: its known divergence would fail as unexplained, and its stale check never run."""
    error = load_error(divergence_case(tmp_path, written))
    assert error.line == 5 and str(error).startswith(f"{tmp_path / 'div.yaml'}:5: divergences/0/references: ")
    assert says in str(error), str(error)


def test_bad_base64_names_the_file_entry_and_says_how_to_fix(tmp_path: Path) -> None:
    text = (
        'id: b64\ndescription: d\nrepo:\n  commits:\n    - files:\n        ok.md: "x"\n'
        '        bad.md:\n          base64: "!!!notbase64"\n'
    )
    error = load_error(write(tmp_path, "b64.yaml", text))
    assert error.line in (7, 8)  # `bad.md:` or its `base64:` line
    assert "bad.md" in str(error) and "base64" in str(error) and "encode" in str(error)


def test_bad_base64_in_a_path_base64_list_entry_is_reported(tmp_path: Path) -> None:
    text = (
        "id: b64list\ndescription: d\nrepo:\n  commits:\n    - files:\n        - path: a.md\n"
        '          content: {base64: "@@@"}\n'
    )
    error = load_error(write(tmp_path, "b64list.yaml", text))
    assert "a.md" in str(error) and "base64" in str(error)
    assert error.line is not None and error.line >= 5


def test_non_utf8_file_names_the_file_the_line_and_the_fix(tmp_path: Path) -> None:
    path = write(tmp_path, "latin.yaml", b"id: latin\nrepo: {}\ndescription: caf\xe9\n")
    error = load_error(path)
    assert str(path) in str(error)
    assert "UTF-8" in str(error) and "save it as UTF-8" in str(error)
    assert error.line == 3, str(error)  # the byte 0xE9 is on line 3


def test_duplicate_ids_across_two_files_name_both_files_and_the_id_line(tmp_path: Path) -> None:
    first = write(tmp_path, "compile/good-one.yaml", GOOD)
    second = write(tmp_path, "more/good-one.yaml", "# the same id again\nid: good-one\ndescription: d\nrepo: {}\n")
    result = load_scenarios([tmp_path])
    assert [s.path for s in result.scenarios] == [first]
    assert len(result.errors) == 1
    error = result.errors[0]
    assert error.path == second
    assert str(first) in str(error) and "new id" in str(error)
    assert error.line == 2, str(error)


def test_good_files_still_load_when_bad_ones_are_present(tmp_path: Path) -> None:
    write(tmp_path, "good-one.yaml", GOOD)
    write(tmp_path, "b-bad-yaml.yaml", "id: [\n")
    write(tmp_path, "c-latin.yaml", b"id: x\ndescription: \xff\n")
    write(tmp_path, "sub/good-two.yaml", GOOD.replace("good-one", "good-two"))
    write(tmp_path, "sub/e-schema.yaml", "id: Not_Valid\ndescription: d\nrepo: {}\n")
    result = load_scenarios([tmp_path])
    assert sorted(s.id for s in result.scenarios) == ["good-one", "good-two"]
    assert sorted(e.path.name for e in result.errors) == ["b-bad-yaml.yaml", "c-latin.yaml", "e-schema.yaml"]


def test_a_file_that_is_not_a_mapping_is_an_error_not_a_crash(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "list.yaml", "- just\n- a list\n"))
    assert error.line == 1 and "mapping" in str(error)


def test_an_empty_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "empty.yaml", ""))
    assert error.path.name == "empty.yaml"


def test_a_good_file_gets_default_inputs_and_its_own_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, "good-one.yaml", GOOD + "inputs:\n  agent_id: a-1\n  include_memfs: false\n")
    scenario = load_scenario(path)
    assert scenario.inputs == {**DEFAULT_INPUTS, "agent_id": "a-1", "include_memfs": False}
    assert scenario.kind == "compile"  # the folder is not cases/lifecycle/


@pytest.mark.parametrize(
    ("now", "count"),
    [
        ("2026-02-30T00:00:00Z", 0),  # rolls over to March 2 in `new Date`
        ("2026-01-32T00:00:00Z", 3.0),  # an Invalid Date: the compile throws on both sides
        ("+275760-09-13T00:00:00.000Z", -5),  # six-digit year, the last valid instant
        ("2026-01-02T03:04:05.123456789Z", 1.0e21),  # more fraction digits than Python reads
        ("2026-01-02T24:00:00Z", 9007199254740993),  # 24:00, and 2^53+1 (JS rounds it)
    ],
)
def test_inputs_take_every_clock_and_number_javascript_takes(tmp_path: Path, now: str, count: float) -> None:
    text = "1.0e+21" if count == 1.0e21 else repr(count)  # YAML 1.1 needs the dot
    path = write(tmp_path, "good-one.yaml", GOOD + f"inputs:\n  now: '{now}'\n  previous_message_count: {text}\n")
    inputs = load_scenario(path).inputs
    assert (inputs["now"], inputs["previous_message_count"]) == (now, count)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("  now: 'Tue Jan 02 2026'", "inputs/now: 'Tue Jan 02 2026' is not an ISO 8601 date-time string"),
        ("  now: '2026-13'", "inputs/now: '2026-13': an invalid ISO date without a time"),  # the fallback reads it
        ("  previous_message_count: .nan", "nan is not a JSON number, so no request can carry it"),
        ("  previous_message_count: 1e21", "YAML reads 1e21 as text; write the number with a dot"),
        ("  previous_message_count: true", "True is not of type 'number'"),
    ],
)
def test_inputs_javascript_cannot_hold_are_load_errors_at_their_line(tmp_path: Path, line: str, says: str) -> None:
    error = load_error(write(tmp_path, "good-one.yaml", GOOD + "inputs:\n" + line + "\n"))
    assert error.line == 8
    assert says in str(error)


def test_a_step_clock_is_read_as_inputs_now_is(tmp_path: Path) -> None:
    probe = "id: probe\ndescription: d\nrepo:\n  commits:\n    - files:\n        a.md: x\nsteps:\n  - turn: hi\n"
    rolled = load_scenario(write(tmp_path, "lifecycle/probe.yaml", probe + "  - clock: '2026-02-30T00:00:00Z'\n"))
    assert rolled.steps[-1] == {"clock": "2026-02-30T00:00:00Z"}  # a roll-over, as in inputs.now
    error = load_error(write(tmp_path / "bad", "lifecycle/probe.yaml", probe + "  - clock: 'Jan 2 2026'\n"))
    assert error.line == 9 and "steps/1/clock: 'Jan 2 2026' is not an ISO 8601 date-time string" in str(error)


def test_a_step_clock_may_be_an_invalid_date_but_a_lifecycle_opening_clock_may_not(tmp_path: Path) -> None:
    probe = "id: probe\ndescription: d\nrepo:\n  commits:\n    - files:\n        a.md: x\n"
    steps = "steps:\n  - turn: hi\n  - clock: '2026-13-01T00:00:00Z'\n  - turn: throws\n"
    invalid = load_scenario(write(tmp_path, "lifecycle/probe.yaml", probe + steps))
    assert invalid.steps[1] == {"clock": "2026-13-01T00:00:00Z"}  # the turn after it throws on both sides
    opening = probe + "inputs:\n  now: '2026-13-01T00:00:00Z'\n" + steps
    error = load_error(write(tmp_path / "bad", "lifecycle/probe.yaml", opening))
    assert error.line == 8 and "inputs/now: '2026-13-01T00:00:00Z' is an Invalid Date" in str(error)
    compile_case = write(tmp_path / "compile", "probe.yaml", probe + "inputs:\n  now: '2026-13-01T00:00:00Z'\n")
    assert load_scenario(compile_case).inputs["now"] == "2026-13-01T00:00:00Z"  # a compile throws on both sides


def test_the_checked_in_corpus_loads_without_errors() -> None:
    cases = Path(__file__).resolve().parent.parent / "cases"
    result = load_scenarios([cases])
    assert result.errors == []
    assert len(result.scenarios) > 10
