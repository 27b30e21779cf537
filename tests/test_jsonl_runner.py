"""harness.runners.jsonl_process: a misbehaving JSON-lines child never yields a record, and the next
request gets a fresh process.

The child is a small real Python script: what it does is chosen per request by the `system` field.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness.core.model import ClientSkills, CompileRequest, Outcome
from harness.runners.jsonl_process import JsonLinesProcess, JsonLinesRunner, ProtocolError

CHILD = textwrap.dedent(
    r"""
    import json, os, sys, time

    def send(obj):
        sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def err(text):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            break
        req = json.loads(line)
        rid = req.get("id")
        if req["op"] == "hello":
            send({"id": rid, "ok": True, "info": {"pid": os.getpid(), "symbols": {"compileLocalSystemPrompt": "c"}}})
            continue
        mode = req["system"]
        record = {"content": mode, "pid": os.getpid(), "agentId": req["agentId"]}
        if mode == "exit":
            err("boom: exiting with 3")
            sys.exit(3)
        elif mode == "garbage":
            err("about to print garbage")
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
        elif mode == "partial":
            err("dying mid-line")
            sys.stdout.write('{"id": %d, "ok": tr' % rid)
            sys.stdout.flush()
            os._exit(0)
        elif mode == "hang":
            err("hanging forever")
            time.sleep(600)
        elif mode == "wrong-id":
            err("answering with the wrong id")
            send({"id": rid + 100, "ok": True, "record": record})
        elif mode == "polluted":
            send({"id": rid, "ok": True, "record": record, "polluted": True})
        elif mode == "restored":
            send({"id": rid, "ok": True, "record": record, "polluted": True, "restored": True})
        elif mode == "thrown":
            send({"id": rid, "ok": True, "thrown": "TypeError: boom", "polluted": False})
        elif mode == "not-ok":
            err("refusing")
            send({"id": rid, "ok": False, "error": "bad request"})
        elif mode == "no-record":
            send({"id": rid, "ok": True})
        elif mode == "late-twice":  # the answer, then a copy of it once the next request has been sent
            send({"id": rid, "ok": True, "record": record, "polluted": False})
            next_line = sys.stdin.buffer.readline()
            send({"id": rid, "ok": True, "record": record, "polluted": False})
            if next_line:
                nxt = json.loads(next_line)
                send({"id": nxt["id"], "ok": True, "record": {**record, "content": nxt["system"]}, "polluted": False})
        elif "clientSkills" in req:  # the driver's answer: the record and the prompt with the skills block
            skills = json.dumps(req["clientSkills"])
            send({"id": rid, "ok": True, "record": record, "systemPromptWithSkills": mode + skills, "polluted": False})
        else:
            send({"id": rid, "ok": True, "record": record, "polluted": False})
    """
)

FAULTS = {
    "exit": ("exited (code 3) without answering", "boom: exiting with 3"),
    "garbage": ("not JSON", "about to print garbage"),
    "partial": ("in the middle of an answer line", "dying mid-line"),
    "hang": ("no answer within 1 s", "hanging forever"),
    "wrong-id": ("does not match request id", "answering with the wrong id"),
}


@pytest.fixture
def child(tmp_path: Path) -> list[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    return [sys.executable, "-u", str(script)]


@pytest.fixture
def runner(child: list[str]):
    runner = JsonLinesRunner("fake", child, None, timeout=1.0)
    runner.start()
    assert runner.start_error is None
    yield runner
    runner.close()


def request(system: str, tmp_path: Path = Path("/nonexistent")) -> CompileRequest:
    return CompileRequest(tmp_path, system, "agent-1", "conv-1", "2026-01-02T03:04:05.678Z")


def test_a_second_answer_that_arrives_after_the_next_request_is_not_taken_for_its_answer(
    runner: JsonLinesRunner,
) -> None:
    first = runner.compile(request("late-twice"))
    after = runner.compile(request("after"))  # the child answers it with the stale copy first
    assert after.status == "ok" and after.record is not None and after.record["content"] == "after"
    assert after.record["pid"] != first.record["pid"]  # type: ignore[index]  # from a fresh process
    assert runner.process.stale_restarts == 1


def test_hello_answer_is_kept_as_info(runner: JsonLinesRunner) -> None:
    assert runner.info["symbols"] == {"compileLocalSystemPrompt": "c"}
    assert runner.describe()["starts"] == 1


def test_a_good_answer_is_an_ok_outcome(runner: JsonLinesRunner) -> None:
    outcome = runner.compile(request("hello"))
    assert outcome.status == "ok"
    assert outcome.record is not None and outcome.record["content"] == "hello"
    assert not outcome.polluted


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_fault_is_an_error_with_stderr_and_the_next_request_restarts(runner: JsonLinesRunner, fault: str) -> None:
    reason, stderr_line = FAULTS[fault]
    first_pid = runner.compile(request("before")).record["pid"]  # type: ignore[index]
    started = time.perf_counter()
    outcome = runner.compile(request(fault))
    elapsed = time.perf_counter() - started
    assert outcome.status == "error"
    assert outcome.record is None
    assert reason in (outcome.error or "")
    assert stderr_line in outcome.stderr
    assert elapsed < 10
    after = runner.compile(request("after"))
    assert after.status == "ok" and after.record is not None
    assert after.record["pid"] != first_pid
    assert runner.process.starts == 2


def test_hang_is_cut_at_the_timeout(runner: JsonLinesRunner) -> None:
    started = time.perf_counter()
    outcome = runner.compile(request("hang"))
    assert outcome.status == "error"
    assert 0.9 <= time.perf_counter() - started < 5


def test_missing_executable_is_an_error_outcome_not_an_exception(tmp_path: Path) -> None:
    runner = JsonLinesRunner("missing", [str(tmp_path / "no-such-binary")], None, timeout=1.0)
    runner.start()
    assert runner.start_error and "no-such-binary" in runner.start_error
    outcome = runner.compile(request("hello"))
    assert outcome.status == "error" and outcome.record is None
    assert "missing unavailable" in (outcome.error or "")
    runner.close()


def test_missing_executable_without_start_is_an_error_outcome(tmp_path: Path) -> None:
    runner = JsonLinesRunner("missing", [str(tmp_path / "no-such-binary")], None, timeout=1.0)
    outcome = runner.compile(request("hello"))
    assert outcome.status == "error" and outcome.record is None
    runner.close()


def test_a_child_that_exits_before_hello_leaves_a_start_error_with_its_stderr(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("import sys\nsys.stderr.write('cannot load bundle\\n')\nsys.exit(3)\n")
    runner = JsonLinesRunner("dies", [sys.executable, str(script)], None, timeout=1.0)
    runner.start()
    assert runner.start_error and "cannot load bundle" in runner.start_error
    outcome = runner.compile(request("hello"))
    assert outcome.status == "error"
    runner.close()


def test_not_ok_answer_is_an_error_with_the_message(runner: JsonLinesRunner) -> None:
    outcome = runner.compile(request("not-ok"))
    assert outcome.status == "error" and outcome.error == "bad request"


def test_an_answer_without_a_record_is_an_error(runner: JsonLinesRunner) -> None:
    outcome = runner.compile(request("no-record"))
    assert outcome.status == "error" and outcome.record is None


def test_thrown_is_its_own_status(runner: JsonLinesRunner) -> None:
    outcome = runner.compile(request("thrown"))
    assert (outcome.status, outcome.thrown, outcome.record) == ("thrown", "TypeError: boom", None)


def test_pollution_restarts_the_process(runner: JsonLinesRunner) -> None:
    outcome = runner.compile(request("polluted"))
    assert outcome.status == "ok" and outcome.polluted
    assert any("restarted" in note for note in outcome.notes)
    assert not runner.process.running
    after = runner.compile(request("after"))
    assert after.status == "ok" and after.record["pid"] != outcome.record["pid"]  # type: ignore[index]
    assert runner.process.starts == 2


def test_pollution_restored_in_place_keeps_the_process(runner: JsonLinesRunner) -> None:
    outcome = runner.compile(request("restored"))
    assert outcome.status == "ok" and outcome.polluted
    assert outcome.notes == ["upstream code polluted a shared prototype; the driver restored it in place"]
    after = runner.compile(request("after"))
    assert after.status == "ok" and after.record["pid"] == outcome.record["pid"]  # type: ignore[index]
    assert runner.process.starts == 1


def test_json_lines_are_split_on_newline_only(runner: JsonLinesRunner) -> None:
    # The child answers with ensure_ascii=False: U+2028, U+2029, U+0085, CR, VT and FF arrive raw.
    text = "a\u2028b\u2029c\u0085d\re\x0bf\x0cg\x1ch\x1di\x1ej\u00e9\U0001f989"
    outcome = runner.compile(request(text))
    assert outcome.status == "ok"
    assert outcome.record["content"] == text  # type: ignore[index]
    assert runner.process.starts == 1


def test_process_request_raises_protocol_error_and_stops(child: list[str]) -> None:
    process = JsonLinesProcess(child, None)
    try:
        with pytest.raises(ProtocolError):
            process.request({"op": "compile", "system": "garbage", "agentId": "a"}, timeout=1.0)
        assert not process.running
        answer = process.request({"op": "hello"}, timeout=5.0)
        assert answer["ok"] is True and answer["id"] == 2
    finally:
        process.stop()


def test_outcome_to_json_leaves_out_empty_fields() -> None:
    assert Outcome("error", error="x").to_json() == {"status": "error", "error": "x"}
    assert Outcome("ok", record={"content": ""}, polluted=True).to_json() == {
        "status": "ok",
        "record": {"content": ""},
        "polluted": True,
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
def test_any_text_round_trips_through_the_child(child: list[str], text: str) -> None:
    # Modes the child acts on are words; any other text is echoed back unchanged.
    assume(text not in FAULTS and text not in ("polluted", "thrown", "not-ok", "no-record"))
    runner = ROUND_TRIP_RUNNERS.setdefault(tuple(child), JsonLinesRunner("fake", child, None, timeout=5.0))
    outcome = runner.compile(request(text))
    assert outcome.status == "ok", outcome.error
    assert outcome.record["content"] == text  # type: ignore[index]
    assert runner.process.starts == 1


ROUND_TRIP_RUNNERS: dict[tuple[str, ...], JsonLinesRunner] = {}


@pytest.fixture(autouse=True, scope="module")
def _close_round_trip_runners():
    yield
    for runner in ROUND_TRIP_RUNNERS.values():
        runner.close()


@pytest.mark.parametrize("skills", [[], None, [{"name": "a"}]])
def test_client_skills_are_sent_when_given_and_the_answer_joins_the_record(runner: JsonLinesRunner, skills) -> None:
    given = runner.compile(replace(request("s"), client_skills=ClientSkills(skills)))
    assert given.status == "ok" and given.record is not None
    assert given.record["systemPromptWithSkills"] == "s" + json.dumps(skills)
    plain = runner.compile(request("s"))  # not given: nothing sent, nothing answered
    assert plain.record is not None and "systemPromptWithSkills" not in plain.record
