"""junit.xml: one testsuite per reference, one testcase per case; which JUnit element each Status becomes
(`SKIPPED`: never a plain pass for what did not pass), failures with their first difference as the message.

A JUnit reader knows three outcomes besides a pass: failure, error and skipped. Fail and stale are failures,
error is an error. Known divergences, runtime divergences and not-applicable results are `<skipped>` with the
reason as the message, so no reader shows them as passing and none fails a build on them; each carries a
`type` saying which: a known divergence is `pytest.xfail`, the type pytest itself writes for an expected
failure, so a reader that knows pytest's convention shows it as one (docs/report-format.md).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from harness.core.model import CaseResult, RunReport, Status
from harness.core.reference import release_key
from harness.verdict.diff import first_difference_line

#: The statuses written as `<skipped>`: each one's `type` and the words its message starts with.
SKIPPED: dict[Status, tuple[str, str]] = {
    Status.KNOWN: ("pytest.xfail", "known divergence"),  # pytest's own type for an expected failure
    Status.RUNTIME: (Status.RUNTIME.value, "runtime divergence"),  # the release under another runtime, not the port
    Status.NOT_APPLICABLE: (Status.NOT_APPLICABLE.value, "not applicable"),
}


def junit_xml(report: RunReport) -> bytes:
    """The report as JUnit XML (byte-stable: sorted by reference and case, timings only when kept)."""
    suites = ET.Element("testsuites", name="letta-conformance")
    by_reference: dict[str, list[CaseResult]] = {}
    for result in sorted(report.results, key=lambda r: (release_key(r.reference), r.case_id)):
        by_reference.setdefault(result.reference, []).append(result)
    for reference, results in by_reference.items():
        counts = Counter(r.status for r in results)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"conformance[{reference}]",
            tests=str(len(results)),
            failures=str(counts[Status.FAIL] + counts[Status.STALE]),
            errors=str(counts[Status.ERROR]),
            skipped=str(sum(counts[status] for status in SKIPPED)),
        )
        for result in results:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"cases.{Path(result.path).parent.name}",
                name=result.case_id,
                file=result.path,
            )
            if report.timing:
                case.set("time", f"{result.seconds:.3f}")
            text = "\n".join(
                result.reasons + [d.field + f" differs at byte {d.offset}" for d in result.diffs] + _turn_diffs(result)
            )
            if result.status in (Status.FAIL, Status.STALE):
                message = f"{result.status}: {first_difference_line(result)}"  # what a CI summary shows
                ET.SubElement(case, "failure", message=message, type=result.status).text = text
            elif result.status == Status.ERROR:
                ET.SubElement(case, "error", message="could not run", type="error").text = text
            elif result.status in SKIPPED:
                kind, label = SKIPPED[result.status]
                ET.SubElement(case, "skipped", type=kind, message=f"{label}: {'; '.join(result.reasons)}")
    if report.load_errors:
        suite = ET.SubElement(
            suites,
            "testsuite",
            name="scenario-files",
            tests=str(len(report.load_errors)),
            errors=str(len(report.load_errors)),
        )
        for error in report.load_errors:
            case = ET.SubElement(suite, "testcase", classname="cases", name=str(error.path))
            ET.SubElement(case, "error", message="invalid scenario").text = str(error)
    for total in ("tests", "failures", "errors", "skipped"):  # the run's totals, for readers that read only the root
        suites.set(total, str(sum(int(suite.get(total, "0")) for suite in suites)))
    ET.indent(suites)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="utf-8") + b"\n"


def _turn_diffs(result: CaseResult) -> list[str]:
    return [
        f"turn {turn.get('turn')} ({turn.get('step', '')}): {d.get('observation')} differs: "
        f"reference {_brief(d.get('reference'))}, implementation {_brief(d.get('impl'))}"
        for turn in result.turns
        for d in turn.get("diffs") or []
    ]


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 200 else text[:200] + "…"
