"""The porter's guide (docs/porting.md) and the files it hands out (docs/examples/): the two example adapters
pass real cases through the harness against the real default reference where they claim to serve and are
not applicable where they do not, their answers validate against reference/protocol.schema.json, and the
GitHub Actions workflow parses, has the job shape the guide describes, and, like the guide, only runs
`conformance` command lines the CLI accepts.

The adapters' stand-in compiler is this repository's port, but what is checked is the harness's verdict
against letta-code itself: the computed fields (`content`, `compiledAt`, `rawSystemHash`, `memfsRevision`)
are the adapters' own code, and the cases are chosen to exercise each rule the guide gives for them.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from harness.cli.main import build_parser
from harness.cli.main import main as conformance
from harness.runners.implementations import ImplSpec

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "porting.md"
EXAMPLES = ROOT / "docs" / "examples"
WORKFLOW = EXAMPLES / "conformance.yml"
SCHEMA = json.loads((ROOT / "reference" / "protocol.schema.json").read_text(encoding="utf-8"))
NODE = shutil.which("node") or "node"
ADAPTERS = {
    "python": [sys.executable, str(EXAMPLES / "adapter.py")],
    "javascript": [NODE, str(EXAMPLES / "adapter.mjs"), sys.executable],  # the stand-in runs this Python
}

# case -> the verdict each adapter must get against the default reference (pypi:0.34.12), and why it is chosen
SERVED = {
    "smoke-basic": "a v1 repository: metadata, compiledAt, rawSystemHash and memfsRevision",
    "v2-basic": "memfs-v2: no metadata, the clock reaches only compiledAt",
    "raw-hash-lone-surrogate": "rawSystemHash over a lone surrogate (U+FFFD), echoed back in content",
    "raw-hash-unicode-system": "rawSystemHash over non-ASCII UTF-8",
    "core-memory-absent": "no {CORE_MEMORY}: the memory after the trimEnd()-ed prompt",
    "replace-dollar-backtick": "replaceAll's $` in the memory",
    "inputs-include-memfs-false": "includeMemfs false: no memfsRevision key",
    "empty-unborn": "no commit: no memfsRevision key",
    "missing-directory": "no directory: no memfsRevision key",
    "shape-head-tag": "memfsRevision is what HEAD names (an annotated tag's id), unpeeled",
    "proto-double-proto": "upstream throws while rendering: answered thrown",
    "jsnumber-past-double": "previousMessageCount past a double (Infinity in the metadata)",
}
ONLY_JAVASCRIPT = {  # new Date is node's in adapter.mjs; adapter.py reads only toISOString's own form
    "jsdate-day-rollover": "a day that rolls over into the next month",
    "jsdate-month-13": "an Invalid Date: the compile throws",
}
NOT_SERVED = {"skills-block-basic": "client"}  # answered `input "clientSkills"`, or undeclared feature client-skills


def impl_spec(adapter: str) -> str:
    return "cmd:" + shlex.join(ADAPTERS[adapter])


def case_paths(ids: list[str]) -> list[str]:
    return [str(ROOT / "cases" / "compile" / f"{case}.yaml") for case in ids]


# --- the adapters through the harness -------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("adapter", ["python", "javascript"])
def test_an_example_adapter_passes_the_cases_it_serves_against_the_real_reference(
    tmp_path: Path, adapter: str, reference_bun: Path, release_bundle: Any
) -> None:
    served = {**SERVED, **(ONLY_JAVASCRIPT if adapter == "javascript" else {})}
    not_served = {**NOT_SERVED, **({} if adapter == "javascript" else {c: "now" for c in ONLY_JAVASCRIPT})}
    spec = impl_spec(adapter)
    code = conformance(["run", *case_paths([*served, *not_served]), "--impl", spec, "--report", str(tmp_path / "r")])
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    verdicts = {r["case"]: r for r in report["results"]}
    assert {r["implementation"] for r in report["results"]} == {spec}
    assert {r["reference"] for r in report["results"]} == {"pypi:0.34.12"}
    wrong = {
        case: (verdicts[case]["status"], verdicts[case].get("reasons"))
        for case in served
        if verdicts[case]["status"] != "pass"
    }
    assert not wrong, wrong
    for case, said in not_served.items():
        assert verdicts[case]["status"] == "not-applicable", verdicts[case]
        assert said in verdicts[case]["reasons"][0]
    assert code == 0


# --- the adapters' answers against the protocol's schema -------------------------------------------------


def schema_errors(answer: Any, definition: str) -> list[str]:
    schema = {**SCHEMA, "$ref": f"#/$defs/{definition}"}
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(schema).iter_errors(answer)]


def ask(adapter: str, requests: list[bytes], env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        ADAPTERS[adapter], input=b"".join(requests), capture_output=True, env=env, timeout=60, check=True
    )
    return [json.loads(line) for line in done.stdout.decode("ascii").splitlines()]


@pytest.mark.parametrize("adapter", ["python", "javascript"])
def test_an_example_adapter_answers_as_the_protocol_schema_says(
    adapter: str, make_repo: Any, git_env: dict[str, str]
) -> None:
    repo = make_repo({"system/human.md": "h\n"})
    system = "lone \ud800 {CORE_MEMORY}"
    compile_request = {
        "op": "compile",
        "memoryDir": str(repo.path),
        "system": system,
        "agentId": "a",
        "conversationId": "c",
        "now": "2026-01-02T03:04:05.678Z",
        "profile": "letta-code@0.34.7",
    }
    requests = [
        {"id": 1, "op": "hello"},
        {"id": 2, **compile_request},
        {"id": 3, **compile_request, "profile": "letta-code@0.25.3"},
        {"id": 4, "op": "skills_block", "systemPrompt": "", "clientSkills": []},
    ]
    lines = [json.dumps(r).encode() + b"\n" for r in requests] + [b"\n", b"not json\n"]
    env = {**git_env, "PYTHONPATH": str(ROOT)}
    hello, compiled, other_profile, unknown_op, bad_line = ask(adapter, lines, env)
    assert schema_errors(hello, "helloAnswer") == []
    assert hello["capabilities"] == {
        "ops": ["hello", "compile"],
        "lifecycle": False,
        "profiles": ["letta-code@0.34.7"],
        "features": ["memfs-v1", "memfs-v2", "metadata-block"],
    }
    assert hello["info"]["implementation"] == "my-port"
    assert schema_errors(compiled, "compileAnswer") == []
    record = compiled["record"]
    assert list(record) == ["content", "coreMemory", "compiledAt", "rawSystemHash", "memfsRevision"]
    assert record["content"] == "lone \ud800 " + record["coreMemory"]  # the lone surrogate comes back
    assert record["compiledAt"] == "2026-01-02T03:04:05.678Z" and record["memfsRevision"] == repo.head()
    assert record["rawSystemHash"] == hashlib.sha256("lone \ufffd {CORE_MEMORY}".encode()).hexdigest()
    for answer, definition in (
        (other_profile, "unsupportedAnswer"),
        (unknown_op, "unsupportedAnswer"),
        (bad_line, "errorAnswer"),
    ):
        assert schema_errors(answer, definition) == [], answer
    assert [a["id"] for a in (other_profile, unknown_op, bad_line)] == [3, 4, None]


# --- the workflow and the command lines ------------------------------------------------------------------


def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def workflow_commands() -> list[str]:
    """Every line of a `run:` step (a folded `>-` step is one line)."""
    steps = [step for job in workflow()["jobs"].values() for step in job["steps"]]
    return [line.strip() for step in steps if "run" in step for line in step["run"].splitlines() if line.strip()]


def guide_commands() -> list[str]:
    """Every `conformance ...` line of the guide's shell blocks, its trailing comment removed."""
    blocks = re.findall(r"```sh\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    return [re.sub(r"\s+#.*$", "", line) for line in lines if line.startswith("conformance ")]


def test_the_example_workflow_is_one_job_that_installs_caches_runs_and_keeps_the_report() -> None:
    data = workflow()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"push", "pull_request"}
    assert "@" in data["env"]["LETTA_CONFORMANCE"]  # the suite pinned
    (job,) = data["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    uses = [step["uses"].split("@")[0] for step in job["steps"] if "uses" in step]
    assert uses == [
        "actions/checkout",
        "actions/setup-python",
        "actions/setup-node",
        "actions/cache",
        "actions/upload-artifact",
    ]
    cache = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == "~/.cache/letta-conformance" and "LETTA_CONFORMANCE" in cache["with"]["key"]
    upload = job["steps"][-1]
    assert upload["if"] == "always()" and upload["with"]["path"] == "conformance-report"
    commands = workflow_commands()
    assert 'python -m pip install "$LETTA_CONFORMANCE"' in commands
    (run,) = [c for c in commands if c.startswith("conformance ")]
    assert shlex.split(run)[1:] == [
        "run",
        "--impl",
        "cmd:python conformance/adapter.py",
        "--expectations",
        "conformance/expectations.yaml",
        "--report",
        "conformance-report",
    ]


def test_every_conformance_command_in_the_guide_and_the_workflow_is_accepted_by_the_cli() -> None:
    commands = guide_commands() + [c for c in workflow_commands() if c.startswith("conformance ")]
    assert len(commands) >= 10, commands
    parser = build_parser()
    refused = []
    for command in commands:
        argv = shlex.split(command)[1:]
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            refused.append(command)
            continue
        for text in getattr(args, "impl", None) or []:
            ImplSpec.parse(text)  # a --impl the run would refuse before the first case
    assert refused == []


def test_the_guide_names_the_files_it_hands_out() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for name in ("docs/examples/adapter.py", "docs/examples/adapter.mjs", "docs/examples/conformance.yml"):
        assert name in text and (ROOT / name).is_file(), name


def test_the_guide_s_expectations_file_is_the_v2_only_port_s_tested_one(tmp_path: Path) -> None:
    """The broad entries the guide shows load, name cases of the corpus, and are those of
    tests/data/v2-only-expectations.yaml, with which tests/v2_only_impl.py runs the whole corpus green."""
    from harness.cases.load import load_scenarios
    from harness.run.expectations import load_expectations

    (block,) = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    tested = yaml.safe_load((ROOT / "tests" / "data" / "v2-only-expectations.yaml").read_text(encoding="utf-8"))
    keys = ("rule", "references", "fields", "kind")
    shown = [{k: entry[k] for k in keys} for entry in yaml.safe_load(block)["expectations"]]
    assert shown == [{k: entry[k] for k in keys} for entry in tested["expectations"]]
    (tmp_path / "expectations.yaml").write_text(block, encoding="utf-8")
    loaded = load_expectations(tmp_path / "expectations.yaml")
    assert loaded.name == "my-port"
    assert loaded.check_corpus(load_scenarios([ROOT / "cases"]).scenarios) == []
