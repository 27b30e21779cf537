"""`--impl letta-server:VERSION` in the harness: the spec parses, the runner's start failure is an error for
every case, lifecycle probes are not applicable to it, and it is compared with letta-code references
through the product view (harness.core.fields) only.

No real server here (tests/test_letta_server_driver.py runs it): the install is faked, and the
driver is a stand-in speaking the same JSON-lines protocol.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.cases.load import load_scenario
from harness.core.fields import COMPARED_FIELDS, LETTA_CODE, PRODUCT, letta_code_memory, server_memory
from harness.core.model import CompileRequest, Divergence, LifecycleOpen, Outcome, Status
from harness.core.reference import ReferenceSpec, default_reference
from harness.run.expectations import load_expectations
from harness.run.session import Session
from harness.runners import letta_server
from harness.runners.base import Runner
from harness.runners.implementations import SERVER, ImplContext, ImplSpec, make_runner
from harness.runners.letta_server import LettaServerRunner
from harness.runners.references import view_for
from harness.verdict.diff import outcome_diff, presence
from letta_profiles import DEFAULT_PROFILE

ROOT = Path(__file__).resolve().parents[1]
SPEC = ImplSpec.parse("letta-server:0.16.8")
METADATA = "<memory_metadata>\n- now\n</memory_metadata>"


# --- the implementation spec ----------------------------------------------------------------------


def test_the_spec_parses_with_its_label() -> None:
    assert (SPEC.kind, SPEC.value, SPEC.product, SPEC.label) == (
        SERVER,
        "0.16.8",
        "letta-server",
        "letta-server:0.16.8",
    )
    assert ImplSpec.parse("python").product == "letta-code"


def test_the_server_is_no_longer_a_reference_and_says_how_to_name_it() -> None:
    with pytest.raises(ValueError, match=r"--impl letta-server:0\.16\.8"):
        ReferenceSpec.parse("letta-server:0.16.8")


def test_the_server_gets_its_runner_and_the_product_view(tmp_path: Path) -> None:
    runner = make_runner(SPEC, DEFAULT_PROFILE, ImplContext({}, tmp_path, None, 60.0))
    assert isinstance(runner, LettaServerRunner) and runner.name == "letta-server:0.16.8"
    assert runner.timeout >= 120.0  # a 2,000-file repository takes about 16 s on the server
    assert view_for(SPEC) is PRODUCT and view_for(ImplSpec.parse("python")) is LETTA_CODE


def test_lifecycle_probes_are_not_applicable_to_the_server(tmp_path: Path) -> None:
    runner = LettaServerRunner("0.16.8", tmp_path, None)
    opened = runner.lifecycle_open(LifecycleOpen(tmp_path, tmp_path / "s", "S", "2026-01-02T03:04:05Z"))
    assert opened.status == "unsupported" and "turn loop" in (opened.error or "")


# --- the comparison view (unit) --------------------------------------------------------------------


def test_the_product_view_cuts_both_records_to_the_memory_rendering_and_revision() -> None:
    server = {"memory": "\n\n<memory>\nx\n</memory>", "memfsRevision": "a" * 40, "content": "S", "coreMemory": "c"}
    code = {"coreMemory": f"<memory>\nx\n</memory>\n\n{METADATA}", "memfsRevision": "a" * 40, "compiledAt": "t"}
    assert server_memory(server) == {"memory": "<memory>\nx\n</memory>", "memfsRevision": "a" * 40}
    assert letta_code_memory(code) == {"memory": "<memory>\nx\n</memory>", "memfsRevision": "a" * 40}
    seen = PRODUCT.apply(Outcome("ok", record=code), Outcome("ok", record=server))  # reference, then the server
    assert outcome_diff(*seen, PRODUCT.fields) == []
    assert presence(*seen, PRODUCT.fields) == {"memory": "compared", "memfsRevision": "compared"}


def test_the_product_view_keeps_absence_and_throws() -> None:
    assert letta_code_memory({"coreMemory": METADATA, "memfsRevision": None}) == {"memory": "", "memfsRevision": None}
    # no repository: letta-code leaves memfsRevision out, the server writes null; both mean "no revision"
    assert letta_code_memory({"coreMemory": "no metadata"}) == {"memory": "no metadata", "memfsRevision": None}
    assert server_memory({"memfsRevision": None}) == {"memfsRevision": None}
    thrown = Outcome("thrown", thrown="ValidationError: description")
    seen = PRODUCT.apply(Outcome("ok", record={"coreMemory": METADATA}), thrown)
    assert seen[1] is thrown
    assert [d.field for d in outcome_diff(*seen, PRODUCT.fields)] == ["thrown"]


def test_the_letta_code_view_compares_everything_unchanged() -> None:
    record = {"content": "S", "coreMemory": "c"}
    reference, port = Outcome("ok", record=record), Outcome("ok", record={**record, "content": "T"})
    assert LETTA_CODE.fields == COMPARED_FIELDS
    assert LETTA_CODE.apply(reference, port) == (reference, port)


# --- through the engine: start failure, and the view applied -------------------------------------


class FakeReference(Runner):
    """letta-code's record shape: memory, then the metadata block, in coreMemory."""

    name = "letta-code@0.32.18"

    def compile(self, request: CompileRequest) -> Outcome:
        core = f"<memory>\nM\n</memory>\n\n{METADATA}"
        return Outcome(
            "ok",
            record={
                "content": f"S\n\n{core}",
                "coreMemory": core,
                "compiledAt": "t",
                "rawSystemHash": "h",
                "memfsRevision": None,
            },
        )


def _session(tmp_path: Path, installer: letta_server.Installer) -> Session:
    return Session(
        [ReferenceSpec("npm", "0.32.18")],
        implementations=[SPEC],
        cache=tmp_path / "cache",
        runner_factory=lambda spec, cache: FakeReference(),
        impl_factory=lambda impl, profile, context: LettaServerRunner(
            impl.value, tmp_path / "home", None, installer=installer
        ),
    )


def _cases() -> list:
    """product-bom with a recorded memory divergence for the server (its product differences are in
    expectations/letta-server-0.16.8.yaml, for the server as the implementation under test), and fm-none."""
    compile_dir = ROOT / "cases" / "compile"
    bom, plain = (load_scenario(compile_dir / f"{name}.yaml") for name in ("product-bom", "fm-none"))
    recorded = Divergence(("0.32.18",), ("memory",), "product-difference", "bom: the server keeps the BOM")
    return [replace(bom, divergences=(recorded,)), plain]


def test_an_install_that_fails_makes_every_case_an_error_never_a_pass(tmp_path: Path) -> None:
    def failing(version: str) -> Path:
        raise OSError(f"pip could not install letta=={version}")

    with _session(tmp_path, failing) as session:
        results = session.run(_cases())
        described = session.describe_implementations()
    assert len(results) == 2
    assert {r.status for r in results} == {Status.ERROR}
    assert all("could not be installed: pip could not install letta==0.16.8" in r.reasons[0] for r in results)
    assert all(r.implementation == SPEC.label for r in results)
    assert described[0]["start_error"].startswith("letta-server:0.16.8:")


def _fake_driver(tmp_path: Path, memory: str) -> Path:
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(f"""
        import json, sys
        for line in sys.stdin:
            request = json.loads(line)
            if request["op"] == "hello":
                answer = {{"ok": True, "info": {{"product": "letta-server"}}}}
            else:
                answer = {{"ok": True, "record": {{"memory": {memory!r}, "memfsRevision": None,
                          "content": "another assembly", "coreMemory": "another metadata"}}}}
            print(json.dumps({{"id": request["id"], **answer}}), flush=True)
    """)
    )
    return driver


@pytest.mark.parametrize(("memory", "status"), [("\n\n<memory>\nM\n</memory>", Status.PASS), ("\n\nother", None)])
def test_the_engine_compares_the_server_on_the_view_s_fields_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory: str, status: Status | None
) -> None:
    monkeypatch.setattr(letta_server, "SERVER_DRIVER", _fake_driver(tmp_path, memory))
    with _session(tmp_path, lambda version: Path(sys.executable)) as session:
        bom, plain = session.run(_cases())
    # content, coreMemory, compiledAt and rawSystemHash differ by design and are never compared
    assert set(plain.compared) == {"memory", "memfsRevision"}
    if status is Status.PASS:
        assert (bom.status, plain.status) == (Status.STALE, Status.PASS)  # product-bom records a memory divergence
    else:
        assert bom.status == Status.KNOWN and "bom:" in bom.reasons[0]
        assert plain.status == Status.FAIL and [d.field for d in plain.diffs] == ["memory"]
        assert json.loads(plain.structured)  # the structured diff is of the compared records
        assert "another" not in plain.structured


# --- the recorded product differences ---------------------------------------------------------------


def _record_divergences() -> Any:
    path = ROOT / "reference" / "letta_server" / "record_divergences.py"
    spec = importlib.util.spec_from_file_location("letta_server_record_divergences", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_listed_difference_has_its_rule_its_docs_row_and_its_expectation() -> None:
    rules = _record_divergences().RULES
    docs = (ROOT / "docs" / "products.md").read_text(encoding="utf-8")
    listed = json.loads((ROOT / "reference" / "letta_server" / "product-differences-0.16.8.json").read_text())
    expectations = load_expectations(ROOT / "expectations" / "letta-server-0.16.8.yaml")
    assert expectations.implementation == SPEC.label
    default = ReferenceSpec.parse(default_reference()).label
    for rule in rules:
        assert f"| `{rule}`" in docs, rule
    for case_id, entry in listed["cases"].items():
        assert entry["rule"] in rules and set(entry["fields"]) <= {"memory", "memfsRevision", "thrown"}, case_id
        path = ROOT / "cases" / "compile" / f"{case_id}.yaml"
        if not path.exists():  # cases-pending/ entries are recorded when they move in
            continue
        if "\nexpect:" in path.read_text(encoding="utf-8"):  # golden: runs on the port alone
            continue
        (recorded,) = expectations.divergences_for(load_scenario(path), default, DEFAULT_PROFILE)
        assert recorded.kind == "product-difference", case_id
        assert recorded.reason.startswith(f"{entry['rule']}: {rules[entry['rule']]}"), case_id
        assert set(recorded.fields) == set(entry["fields"]), case_id


@pytest.fixture(scope="module")
def server_python() -> Path:
    if os.environ.get("LETTA_CONFORMANCE_OFFLINE") == "1":
        pytest.skip("LETTA_CONFORMANCE_OFFLINE=1: the letta-server environment is not installed offline")
    try:
        return letta_server.ensure_server_env(SPEC.value)
    except Exception as error:
        pytest.skip(f"the letta-server {SPEC.value} environment could not be installed: {error}")


@pytest.mark.integration
def test_a_now_python_cannot_hold_is_the_server_s_throw_not_an_error(server_python: Path, tmp_path: Path) -> None:
    runner = LettaServerRunner(SPEC.value, tmp_path / "home", None, installer=lambda version: server_python)
    runner.start()
    assert runner.start_error is None
    try:
        request = CompileRequest(tmp_path / "none", "S", "agent-1", "conv-1", "2026-02-30T10:20:30.400Z")
        outcome = runner.compile(request)
        assert outcome.status == "thrown" and outcome.record is None
        assert outcome.thrown is not None and outcome.thrown.startswith("UnrepresentableDate: the server cannot")
        assert "day is out of range" in outcome.thrown
        for now in ("2026-12-31T24:00:00Z", "0000-01-01T00:00:00Z", "2026-01-32T00:00:00Z"):
            assert runner.compile(CompileRequest(tmp_path / "none", "S", "a", "c", now)).status == "thrown", now
        # a text that is no date at all is still a bad request, never a result
        assert runner.compile(CompileRequest(tmp_path / "none", "S", "a", "c", "not a date")).status == "error"
        assert runner.compile(CompileRequest(tmp_path / "none", "S", "a", "c", "2026-01-02T03:04:05Z")).status == "ok"
    finally:
        runner.close()
