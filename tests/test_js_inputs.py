"""A case's inputs are JavaScript strings and JSON numbers, for every implementation alike (issue 25, item 2).

- harness.cases.inputs.js_string: the UTF-16 code units JSON.parse reads from the escapes the wire carries
  (a high+low pair one character, a lone surrogate kept), checked against JSON.parse itself (bun) and
  applied at load time to every string of `inputs` and `steps`;
- a NaN or infinity anywhere in `inputs` or `steps` is a load error naming file:line;
- a request the harness cannot write as JSON is never sent, and the verdict blames the harness (through
  `conformance run` with tests/fake_reference.py's fake bun, which reads lines as JSON.parse does).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_reference import fake_bundle, install_fake_bun, pids_started, scenario_yaml
from test_case_rules import case, refused

from harness.cases import load
from harness.cases.inputs import js_string, js_value, non_finite_at
from harness.cases.load import load_scenario
from harness.cli import main as cli
from harness.core.model import DEFAULT_IMPLEMENTATION, CompileRequest, Outcome, Scenario, Status
from harness.runners.jsonl_process import JsonLinesRunner
from harness.runners.wire import UnreadableRequest, encode_request
from harness.verdict.judge import judge

CRAB = "\U0001f980"
# Python strings as PyYAML loads the double-quoted escapes, and what JSON.parse makes of the same escapes
# (ECMA-404 / ECMA-262 JSON.parse: each \uXXXX is one code unit; a string is its code units).
SHAPES = [
    ("\ud83e\udd80", CRAB),  # a pair written as two escapes is one astral character
    ("\ud83e\ud83e\udd80", "\ud83e" + CRAB),  # a lone high surrogate, then a pair
    ("\udd80\ud83e", "\udd80\ud83e"),  # a reversed pair: two lone surrogates
    ("x\ud800", "x\ud800"),  # a lone high surrogate at the end
    ("\udc00y", "\udc00y"),  # a lone low surrogate
    (CRAB, CRAB),  # already one character
    ("ascii {CORE_MEMORY}", "ascii {CORE_MEMORY}"),
]


REPO = 'repo:\n  commits:\n    - files:\n        system/human.md: "h\\n"\n'


@pytest.mark.parametrize(("loaded", "javascript"), SHAPES)
def test_a_case_string_is_the_javascript_string_json_parse_reads(loaded: str, javascript: str) -> None:
    assert js_string(loaded) == javascript
    # the wire's form of it (ensure_ascii escapes) reads back as the same string: the port in process and a
    # JSON-lines program are given one value
    assert json.loads(encode_request({"s": js_string(loaded)})) == {"s": javascript}


@pytest.mark.integration
def test_json_parse_in_bun_reads_the_wire_s_escapes_as_js_string_does(bun: Path, tmp_path: Path) -> None:
    """The expected code units come from JSON.parse itself, not from Python's json module."""
    script = tmp_path / "units.mjs"
    script.write_text(
        'const lines = require("fs").readFileSync(0, "utf8").split("\\n").filter(Boolean);\n'
        "for (const line of lines) { const s = JSON.parse(line);"
        " console.log(JSON.stringify([...Array(s.length).keys()].map((i) => s.charCodeAt(i)))); }\n"
    )
    lines = "".join(json.dumps(loaded, ensure_ascii=True) + "\n" for loaded, _ in SHAPES)
    done = subprocess.run([str(bun), str(script)], input=lines, capture_output=True, text=True, check=True)
    units = [json.loads(line) for line in done.stdout.splitlines()]
    ours = [list(memoryview(js_string(loaded).encode("utf-16-le", "surrogatepass")).cast("H")) for loaded, _ in SHAPES]
    assert units == ours
    assert [len(u) for u in units] == [2, 3, 2, 2, 2, 2, 19]  # code units, not code points


@pytest.fixture(scope="module")
def bun() -> Path:
    from harness.acquire.releases import ReferenceUnavailable, ensure_bun

    try:
        return ensure_bun()
    except ReferenceUnavailable as error:
        pytest.skip(f"the pinned bun is not available: {error}")


def test_every_string_of_inputs_is_a_javascript_string_at_load_time(tmp_path: Path) -> None:
    text = (
        'id: c\ndescription: d\ninputs:\n  system: "a \\ud83e\\udd80 {CORE_MEMORY}"\n'
        '  agent_id: "agent-\\ud83e\\udd80"\n  conversation_id: "lone \\ud800"\n'
        '  client_skills:\n    - {name: "\\ud83e\\udd80 s", description: "d \\ud83d\\ude00", location: "/x"}\n'
    ) + REPO
    inputs = load_scenario(case(tmp_path, text)).inputs
    assert inputs["system"] == f"a {CRAB} {{CORE_MEMORY}}" and inputs["agent_id"] == f"agent-{CRAB}"
    assert inputs["conversation_id"] == "lone \ud800"  # a lone surrogate is kept: JSON carries it as an escape
    assert inputs["client_skills"] == [{"name": f"{CRAB} s", "description": "d \U0001f600", "location": "/x"}]


def test_every_string_of_a_lifecycle_step_is_a_javascript_string_at_load_time(tmp_path: Path) -> None:
    text = (
        "id: c\ndescription: d\n" + REPO + 'steps:\n  - turn: "hi \\ud83e\\udd80"\n'
        '  - system: "\\ud83e\\udd80 {CORE_MEMORY}"\n  - turn: t\n    client_skills: [{name: "\\ud83e\\udd80"}]\n'
    )
    steps = load_scenario(case(tmp_path, text, kind="lifecycle")).steps
    assert steps == (
        {"turn": f"hi {CRAB}"},
        {"system": f"{CRAB} {{CORE_MEMORY}}"},
        {"turn": "t", "client_skills": [{"name": CRAB}]},
    )


def test_js_value_reaches_keys_and_nested_values_and_leaves_numbers_alone() -> None:
    value = {"\ud83e\udd80": [{"k": "\ud83e\udd80"}, 3, 3.0, True, None]}
    assert js_value(value) == {CRAB: [{"k": CRAB}, 3, 3.0, True, None]}
    assert non_finite_at({"a": [1, {"b": float("-inf")}]}) == ("a", 1, "b")
    assert non_finite_at({"a": [1, 1e308, "inf"]}) is None


@pytest.mark.parametrize(
    ("lines", "line", "says"),
    [
        ("  previous_message_count: .nan\n", 4, "inputs/previous_message_count: nan is not a JSON number"),
        ("  client_skills:\n    - {name: ok}\n    - {name: .inf}\n", 6, "inputs/client_skills/1/name: inf is not"),
        (
            "  client_skills:\n    - name: n\n      extra:\n        deep: [1, -.inf]\n",
            7,
            "inputs/client_skills/0/extra/deep/1: -inf is not a JSON number",
        ),
        ("  client_skills: .NaN\n", 4, "inputs/client_skills: nan is not a JSON number"),
    ],
)
def test_a_non_finite_number_anywhere_in_inputs_is_a_load_error_at_its_line(
    tmp_path: Path, lines: str, line: int, says: str
) -> None:
    error = refused(case(tmp_path, "id: c\ndescription: d\ninputs:\n" + lines + REPO))
    assert error.line == line and says in str(error)
    assert "JSON has no NaN or Infinity" in str(error)


def test_a_non_finite_number_in_a_lifecycle_step_is_a_load_error_at_its_line(tmp_path: Path) -> None:
    text = "id: c\ndescription: d\n" + REPO + "steps:\n  - turn: hi\n  - turn: t\n    client_skills: [{name: .inf}]\n"
    error = refused(case(tmp_path, text, kind="lifecycle"))
    assert error.line == 10 and "steps/1/client_skills/0/name: inf is not a JSON number" in str(error)


# --- a request the harness cannot write is the harness's error --------------------------------------------


def test_serialisation_refuses_nan_and_names_the_field() -> None:
    with pytest.raises(UnreadableRequest) as info:
        encode_request({"op": "compile", "clientSkills": [{"name": float("inf")}]})
    assert "harness bug" in str(info.value) and "clientSkills/0/name is inf" in str(info.value)


STRICT_CHILD = r"""
import json, sys
def refuse(name):
    raise ValueError(name)
for line in sys.stdin:
    with open(sys.argv[1], "a") as seen:
        seen.write(line)
    try:
        req = json.loads(line, parse_constant=refuse)
    except ValueError as error:
        print(json.dumps({"id": None, "ok": False, "error": f"request is not JSON: {error}"}), flush=True)
        continue
    print(json.dumps({"id": req["id"], "ok": True, "record": {"content": "c"}}), flush=True)
"""


def test_a_stand_in_reference_never_receives_an_unreadable_request(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    runner = JsonLinesRunner("stand-in", [sys.executable, "-c", STRICT_CHILD, str(seen)], None, timeout=20)
    runner.start()
    try:
        request = CompileRequest(tmp_path, "s", "a", "c", "2026-01-02T03:04:05.678Z", float("nan"))
        outcome = runner.compile(request)
        runner.prefetch([request])  # a batch leaves it out: `compile` answers it
        again = runner.compile(request)
    finally:
        runner.close()
    for result in (outcome, again):
        assert result.status == "error" and result.harness_bug
        assert "previousMessageCount is nan" in str(result.error)
    assert [json.loads(line)["op"] for line in seen.read_text().splitlines()] == ["hello"]  # nothing else sent
    scenario = Scenario(id="c", description="d", path=tmp_path / "c.yaml", tags=(), inputs={}, repo={})
    status, _, reasons = judge(scenario, "0.32.18", outcome, Outcome("ok", record={"content": "c"}))
    assert status is Status.ERROR
    assert reasons[0].startswith("the harness built a request no implementation can read (a harness bug")
    assert not any("reference could not run" in r for r in reasons)


def test_conformance_run_blames_the_harness_for_a_request_no_driver_can_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harness bug let a NaN through (the loader's check switched off): the fake bun, reading lines as
    JSON.parse does, would answer `request is not JSON` and the case would blame the reference; instead the
    request is never sent and the verdict names the harness."""
    bin_dir = tmp_path / "bin"
    install_fake_bun(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(load, "_check_finite", lambda *args: None)
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    (cases / "honest.yaml").write_text(scenario_yaml("honest", "S\n\n{CORE_MEMORY}", body="honest"))
    nan = scenario_yaml("nan-count", "S\n\n{CORE_MEMORY}", body="n").replace(
        "inputs:\n", "inputs:\n  previous_message_count: .nan\n"
    )
    assert "previous_message_count: .nan" in nan
    (cases / "nan-count.yaml").write_text(nan)
    report_dir = tmp_path / "report"
    bundle = fake_bundle(tmp_path / "bundle")
    code = cli.main(
        ["run", str(tmp_path / "cases"), "--reference", f"bundle:{bundle}", "--report", str(report_dir), "--no-timing"]
    )
    report = json.loads((report_dir / "report.json").read_text())
    from harness.report.stored import full_entries

    results = {r["case"]: r for r in full_entries(report)}
    assert code != 0 and results["honest"]["status"] == "pass"
    assert (
        results["nan-count"]["status"] == "error" and results["nan-count"]["implementation"] == DEFAULT_IMPLEMENTATION
    )
    why = "\n".join(results["nan-count"]["reasons"])
    assert "the harness built a request no implementation can read (a harness bug" in why
    assert "previousMessageCount is nan" in why and "reference could not run" not in why
    assert len(pids_started(bin_dir)) == 1  # the unreadable request did not cost the driver a restart
