"""junit.xml: one testsuite per reference, one testcase per case; failures (their message the first difference),
errors and skips from each Status (known and runtime divergences, and not applicable: a skip, never a pass)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from harness.model import CaseResult, RunReport, Status
from harness.verdict.diff import first_difference_line
from harness.versions import release_key


def junit_xml(report: RunReport) -> bytes:
    """The report as JUnit XML (byte-stable: sorted by reference and case, timings only when kept)."""
    suites = ET.Element("testsuites", name="letta-conformance")
    by_reference: dict[str, list[CaseResult]] = {}
    for result in sorted(report.results, key=lambda r: (release_key(r.reference), r.case_id)):
        by_reference.setdefault(result.reference, []).append(result)
    for reference, results in by_reference.items():
        counts = Counter(r.status for r in results)
        suite = ET.SubElement(
            suites, "testsuite", name=f"conformance[{reference}]", tests=str(len(results)),
            failures=str(counts[Status.FAIL] + counts[Status.STALE]), errors=str(counts[Status.ERROR]),
            skipped=str(counts[Status.KNOWN] + counts[Status.RUNTIME] + counts[Status.NOT_APPLICABLE]),
        )  # fmt: skip
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
            elif result.status == Status.KNOWN:
                ET.SubElement(case, "skipped", message=f"known divergence: {'; '.join(result.reasons)}")
            elif result.status == Status.RUNTIME:
                ET.SubElement(case, "skipped", message=f"runtime divergence: {'; '.join(result.reasons)}")
            elif result.status == Status.NOT_APPLICABLE:
                ET.SubElement(case, "skipped", message=f"not applicable: {'; '.join(result.reasons)}")
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
