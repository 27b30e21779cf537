"""The verdict of every upstream test from its control run and its shim run (`judge_file`: the one rule).

In this order, for each test bun reported in the control run (upstream's own modules, nothing swapped):
1. upstream skips it at this revision (`test.skip`, `test.todo`, a skip condition) -> not-applicable
   (fault `upstream`);
2. it fails with upstream's own module -> broken (`upstream`), with the control run's message;
3. it did not run with the shim (the file did not load) -> fail (`harness`: the shim, not the implementation);
4. a call it made was answered `unsupported`, or the shim could not make it -> not-applicable (`unsupported`),
   saying what;
5. it made no forwarded call -> not-applicable (`unsupported`): only upstream's code ran, so passing says
   nothing of the implementation (the frontmatter parser's own tests: the protocol has no op for it);
6. it passed -> pass; it failed -> fail (`implementation`), with upstream's assertion message and the call that
   produced the value: the last call whose answer holds the string the assertion received (bun's `Received:`),
   else the test's last call (`call_basis` says which; the report keeps every call of the test).

A file that does not load with upstream's own module is one broken entry (its tests cannot be named); one
that fails between tests gets a file-level entry too (broken with upstream's module, else fail).
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.report.upstream_records import FILE_LEVEL, FileRun, Outcome, SelectedFile, TestRun, TestVerdict, Verdict

FRONTMATTER_NOTE = (
    "it tests upstream's frontmatter parser directly (src/utils/frontmatter.ts): the protocol has "
    "no op for it, so no call reached the implementation"
)
NO_CALL_NOTE = "it made no call to a forwarded function (of any swapped module): only upstream's own code ran"


def unsupported_of(calls: list[dict[str, Any]]) -> str | None:
    """What the implementation (or the shim) could not serve among these calls, or None."""
    for call in calls:
        if call.get("notApplicable"):
            return f"{call.get('call')}: {call['notApplicable']}"
        answer = call.get("answer")
        if isinstance(answer, dict) and answer.get("ok") is False and isinstance(answer.get("unsupported"), str):
            return f"{call.get('call')}: the implementation answered unsupported ({answer['unsupported']})"
    return None


MOJIBAKE_NOTE = (
    "the answer holds UTF-8 decoded as Latin-1 ({sample!r} is {fixed!r}): what a 0.25.x release bundle gives "
    "under its `// @bun` pragma (docs/profiles.md); upstream's tests run the source, which has no pragma"
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def mojibake_of(calls: list[dict[str, Any]]) -> str | None:
    """A hint when an answer holds UTF-8 read as Latin-1 (the `// @bun` pragma of 0.25.x bundles), else None."""
    for call in calls:
        for text in _strings(call.get("answer")):
            for start in range(len(text)):
                lead = ord(text[start])
                if 0xC2 <= lead <= 0xF4:
                    piece = text[start : start + (2 if lead < 0xE0 else 3 if lead < 0xF0 else 4)]
                    try:
                        fixed = piece.encode("latin-1").decode("utf-8")
                    except (UnicodeEncodeError, UnicodeDecodeError):
                        continue
                    return MOJIBAKE_NOTE.format(sample=piece, fixed=fixed)
    return None


_RECEIVED = re.compile(r'^Received: (".*")\s*$', re.M)


def received_value(message: str) -> str | None:
    """The string upstream's assertion received, as bun prints it (`Received: "..."`), or None."""
    found = _RECEIVED.search(message)
    if not found:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def producing_call(calls: list[dict[str, Any]], message: str) -> tuple[dict[str, Any] | None, str]:
    """The call that produced the value an assertion failed on: the last whose answer holds the string upstream's
    assertion received (equal, else containing it), else the test's last call; and which of the two it is."""
    value = received_value(message)
    if value:
        for matches in (lambda text: text == value, lambda text: value in text):
            for call in reversed(calls):
                if any(matches(text) for text in _strings(call.get("answer"))):
                    return call, "its answer holds the value upstream's assertion received"
    return (calls[-1] if calls else None), "the test's last forwarded call"


def implementation_error(calls: list[dict[str, Any]]) -> str | None:
    for call in calls:
        answer = call.get("answer")
        if call.get("bridgeError"):
            return f"{call.get('call')}: {call['bridgeError']}"
        if isinstance(answer, dict) and answer.get("ok") is False and "error" in answer:
            return f"{call.get('call')}: {answer['error']}"
    return None


def calls_of(run: FileRun, index: int | None) -> list[dict[str, Any]]:
    """The calls the `index`-th test bun ran made (all of the file's when they cannot be told apart)."""
    if not run.attributed or index is None:
        return list(run.calls)
    return [call for call, owner in zip(run.calls, run.calls_by_test, strict=True) if owner == index]


def _ran_indexes(run: FileRun) -> dict[str, list[tuple[int | None, TestRun]]]:
    """Each test name of a run to its (index among the tests bun ran, test), in order (names may repeat)."""
    found: dict[str, list[tuple[int | None, TestRun]]] = {}
    ran = 0
    for test in run.tests:
        index = None
        if test.outcome in (Outcome.PASSED, Outcome.FAILED):
            index, ran = ran, ran + 1
        found.setdefault(test.name, []).append((index, test))
    return found


def verdict_of(
    selected: SelectedFile, control: TestRun, shim: TestRun | None, calls: list[dict[str, Any]], shim_run: FileRun
) -> TestVerdict:
    """One test's verdict (the rule in the module docstring)."""
    made = TestVerdict(control.file, control.name, Verdict.PASS, calls=len(calls))
    if control.outcome in (Outcome.SKIPPED, Outcome.TODO):
        kind = "marks it todo" if control.outcome == Outcome.TODO else "skips it (test.skip or a skip condition)"
        made.verdict, made.fault, made.reason = Verdict.NOT_APPLICABLE, "upstream", f"upstream {kind} at this revision"
        return made
    if control.outcome == Outcome.FAILED:
        made.verdict, made.fault = Verdict.BROKEN, "upstream"
        made.reason, made.control_message = "fails with upstream's own modules too", control.message
        return made
    if shim is None:
        made.verdict, made.fault = Verdict.FAIL, "harness"
        made.reason = f"did not run with the shim: {shim_run.load_error or 'bun did not report it'}"
        return made
    made.message = shim.message
    unsupported = unsupported_of(calls)
    if unsupported:
        made.verdict, made.fault, made.reason = Verdict.NOT_APPLICABLE, "unsupported", unsupported
        return made
    if not calls and shim.outcome == Outcome.PASSED:
        note = FRONTMATTER_NOTE if any("frontmatter" in r for r in selected.reasons) and not selected.imports else ""
        made.verdict, made.fault, made.reason = Verdict.NOT_APPLICABLE, "unsupported", note or NO_CALL_NOTE
        return made
    if shim.outcome == Outcome.PASSED:
        return made
    made.verdict, made.call_log = Verdict.FAIL, calls
    made.call, made.call_basis = producing_call(calls, shim.message)
    if shim.outcome in (Outcome.SKIPPED, Outcome.TODO):
        made.fault, made.reason = "harness", "skipped with the shim only"
    elif not calls:
        made.fault, made.reason = "harness", "fails with the shim although it made no forwarded call"
    else:
        error = implementation_error(calls)
        made.fault = "implementation"
        made.reason = (
            f"the implementation failed: {error}"
            if error
            else "upstream's assertion fails on what the implementation answered"
        )
        hint = mojibake_of(calls)
        if hint:
            made.reason += f"; {hint}"
    return made


def judge_file(selected: SelectedFile, control: FileRun, shim: FileRun) -> list[TestVerdict]:
    """Every test of one file (the rules in the module docstring)."""
    if not control.tests:
        reason = f"the file does not load with upstream's own modules: {control.load_error or 'no test'}"
        return [
            TestVerdict(
                selected.path, FILE_LEVEL, Verdict.BROKEN, reason, "upstream", control_message=control.load_error or ""
            )
        ]
    shim_tests = _ran_indexes(shim)
    verdicts = []
    for test in control.tests:
        candidates = shim_tests.get(test.name) or []
        index, found = candidates.pop(0) if candidates else (None, None)
        calls = calls_of(shim, index) if found is not None else []
        verdicts.append(verdict_of(selected, test, found, calls, shim))
    if control.load_error:
        verdicts.append(
            TestVerdict(
                selected.path,
                FILE_LEVEL,
                Verdict.BROKEN,
                "fails between tests with upstream's own modules",
                "upstream",
                control_message=control.load_error,
            )
        )
    elif shim.load_error and shim.tests:
        file_calls = [c for c, owner in zip(shim.calls, shim.calls_by_test, strict=True) if owner == -1]
        verdicts.append(
            TestVerdict(
                selected.path,
                FILE_LEVEL,
                Verdict.FAIL,
                "fails between tests with the shim",
                "implementation" if shim.calls else "harness",
                message=shim.load_error,
                call=file_calls[-1] if file_calls else None,
                calls=len(shim.calls),
                call_log=file_calls,
            )
        )
    return verdicts
