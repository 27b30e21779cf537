"""A fabricated run for the report tests: passes, byte-level failures, an error, a known divergence, a lifecycle case.

Outcomes are made up here, and differences come from harness.compare on them, so the expected
offsets in the tests are worked out by hand from these strings, not copied from a report.
"""

from __future__ import annotations

from harness.core.fields import COMPARED_FIELDS
from harness.core.model import CaseResult, Outcome, RunReport, Status
from harness.verdict.diff import outcome_diff

NOW = "2026-01-02T03:04:05.678Z"
REFERENCES = ("0.32.18", "0.30.28")

# (case id, tags, reference coreMemory, port coreMemory, first differing byte)
FAILURES = [
    ("crlf-vs-lf", ("line-endings",), "line one\r\nline two\r\n", "line one\nline two\n", 8),
    ("bom-kept", ("bom",), "\ufeffhuman: likes tea", "human: likes tea", 0),
    ("nbsp-in-value", ("whitespace",), "name:\u00a0Ada", "name: Ada", 5),
    ("trailing-space", ("whitespace",), "value \nnext", "value\nnext", 5),
]
STDERR = "TypeError: compileLocalSystemPrompt is not a function\n    at reference/driver.mjs:42:7\n"


def record(core: str) -> dict[str, str]:
    return {
        "content": "S\n\n" + core,
        "coreMemory": core,
        "compiledAt": NOW,
        "rawSystemHash": "ab" * 32,
        "memfsRevision": "0" * 40,
    }


def request(case_id: str) -> dict[str, object]:
    return {
        "memoryDir": f"/cache/repos/{case_id}/memory",
        "system": "S",
        "agentId": "agent-1",
        "conversationId": "conv-1",
        "now": NOW,
        "previousMessageCount": 0,
        "includeMemfs": True,
    }


def case(
    case_id: str,
    status: str,
    tags: tuple[str, ...],
    reference: Outcome | None,
    port: Outcome | None,
    label: str = REFERENCES[0],
    **extra: object,
) -> CaseResult:
    diffs = outcome_diff(reference, port) if reference and port and status in (Status.FAIL, Status.KNOWN) else []
    return CaseResult(
        case_id,
        label,
        f"letta-code@{label}",
        status,
        tags,
        f"cases/compile/{case_id}.yaml",
        description=f"fabricated {status} case",
        diffs=diffs,
        reference_outcome=reference,
        impl_outcome=port,
        request=request(case_id),
        seconds=0.1,
        **extra,
    )  # type: ignore[arg-type]


def lifecycle_turns() -> list[dict[str, object]]:
    update = "<memory_update>\nhuman.md changed\n</memory_update>"
    return [
        {
            "turn": 1,
            "step": "send hello",
            "impl": {"fact_seen": False, "messages": 1},
            "reference": {"fact_seen": False, "messages": 1},
            "diffs": [],
        },
        {
            "turn": 2,
            "step": "commit memory, send",
            "impl": {"fact_seen": True, "messages": 3, "reminder": update},
            "reference": {"fact_seen": True, "messages": 3, "reminder": update + "\r\n"},
            "diffs": [{"observation": "reminder", "impl": update, "reference": update + "\r\n"}],
        },
        {
            "turn": 3,
            "step": "send again",
            "impl": {"fact_seen": True, "messages": 5},
            "reference": {"fact_seen": False, "messages": 5},
            "diffs": [{"observation": "fact_seen", "impl": True, "reference": False}],
        },
    ]


def mixed_results() -> list[CaseResult]:
    ok = Outcome("ok", record=record("persona: helpful"))
    results = [
        case("a-pass", Status.PASS, ("frontmatter",), ok, ok),
        case("a-pass", Status.PASS, ("frontmatter",), ok, ok, label=REFERENCES[1]),
        case(
            "error-case",
            Status.ERROR,
            ("driver",),
            Outcome("error", error="driver exited with code 1", stderr=STDERR),
            ok,
            reasons=["reference could not run: driver exited with code 1"],
        ),
        case(
            "known-fffd",
            Status.KNOWN,
            ("utf8",),
            Outcome("ok", record=record("bad \ufffd byte")),
            Outcome("ok", record=record("bad \udcff byte")),
            reasons=["upstream-bug: execFileSync decodes as U+FFFD"],
        ),
        case(
            "lifecycle-update-once",
            Status.FAIL,
            ("lifecycle",),
            ok,
            ok,
            turns=lifecycle_turns(),
            reasons=["turn 2 and 3 differ"],
        ),
        case(
            "escape-html",
            Status.FAIL,
            ("html",),
            Outcome("ok", record=record("<script>alert(1)</script> & <b>"), stderr="<script>alert(3)</script>"),
            Outcome("ok", record=record("<script>alert(2)</script> & <b>")),
            reasons=["<script>alert(4)</script>"],
        ),
    ]
    for case_id, tags, ref_core, port_core, _ in FAILURES:
        results.append(
            case(
                case_id,
                Status.FAIL,
                tags,
                Outcome("ok", record=record(ref_core)),
                Outcome("ok", record=record(port_core)),
            )
        )
    results.append(case("crlf-vs-lf", Status.PASS, ("line-endings",), ok, ok, label=REFERENCES[1]))
    return results


def mixed_report() -> RunReport:
    references = [{"name": f"letta-code@{label}", "version": label} for label in REFERENCES]
    return RunReport(mixed_results(), references, [], ["conformance", "run", "cases", "--report", "out"], timing=False)


#: The synthetic full matrix of the size budgets (docs/report-format.md): 200 cases x 35 references, all passing.
MATRIX_LABELS = ["0.25.3", "0.32.8", "0.32.18"] + [f"pypi:0.34.{n}" for n in range(32)]


def passing_matrix(cases: int = 200, labels: list[str] = MATRIX_LABELS) -> RunReport:
    """Every case passing against every reference, with records as long as the corpus's (a few hundred bytes of
    memory, full-length hashes) and every field compared; timings on, as `conformance matrix` writes them."""
    compared = dict.fromkeys(COMPARED_FIELDS, "compared")
    results = []
    for number in range(cases):
        core = f"<memory>\n<human>\nnote {number}: " + "likes tea and long walks. " * 12 + "\n</human>\n</memory>"
        ok = Outcome(
            "ok", record={**record(core), "rawSystemHash": f"{number:064x}", "memfsRevision": f"{number:040x}"}
        )
        results += [
            case(
                f"case-{number:03d}", Status.PASS, ("core", "frontmatter"), ok, ok, label=label, compared=dict(compared)
            )
            for label in labels
        ]
    return RunReport(results, [{"name": n} for n in labels], [], ["conformance", "matrix"])


#: Three implementations under test, as tests/test_summary.py and the browser test use them.
PYTHON, SERVER, PLANTED = "python", "letta-server:0.16.8", "cmd:python tests/planted_bug_impl.py"
#: (case id, tags): several tags of one family (quoted-name, bom-crlf, v2-root), tags of two families (labels-punct).
SUMMARY_CASES = {
    "labels-locale": ("collation",),
    "labels-punct": ("collation", "names"),
    "quoted-name": ("quoting", "names"),
    "bom-crlf": ("bom", "newlines"),
    "v2-root": ("memfs-v2", "memory-index", "trim"),
    "lifecycle-once": ("lifecycle", "memory-update"),
    "spec-example": ("spec", "golden"),
}
DEFAULT_REFERENCE = "pypi:0.34.12"


def three_implementations() -> list[CaseResult]:
    """Hand-made results of three implementations (the statuses are chosen, not computed):

    - python: every case passes against 0.32.18 and pypi:0.34.12, but v2-root is a known divergence against
      0.32.18; bom-crlf against the node variant 0.32.18@node is a runtime divergence; spec-example passes golden.
    - letta-server:0.16.8, against pypi:0.34.12: code-point label order recorded as known (labels-*), quoted-name
      fails, bom-crlf passes, v2-root and lifecycle-once are unsupported (not applicable); spec-example passes.
    - the planted-bug command (labels sorted by code point), against pypi:0.34.12: labels-* fail, lifecycle-once
      is an error (it hung), the rest pass.
    """
    ok = Outcome("ok", record=record("m"))
    status_of = {
        (PYTHON, "v2-root", "0.32.18"): Status.KNOWN,
        (PYTHON, "bom-crlf", "0.32.18@node"): Status.RUNTIME,
        (SERVER, "labels-locale", DEFAULT_REFERENCE): Status.KNOWN,
        (SERVER, "labels-punct", DEFAULT_REFERENCE): Status.KNOWN,
        (SERVER, "quoted-name", DEFAULT_REFERENCE): Status.FAIL,
        (SERVER, "v2-root", DEFAULT_REFERENCE): Status.NOT_APPLICABLE,
        (SERVER, "lifecycle-once", DEFAULT_REFERENCE): Status.NOT_APPLICABLE,
        (PLANTED, "labels-locale", DEFAULT_REFERENCE): Status.FAIL,
        (PLANTED, "labels-punct", DEFAULT_REFERENCE): Status.FAIL,
        (PLANTED, "lifecycle-once", DEFAULT_REFERENCE): Status.ERROR,
    }
    runs = [(PYTHON, "0.32.18"), (PYTHON, DEFAULT_REFERENCE), (SERVER, DEFAULT_REFERENCE), (PLANTED, DEFAULT_REFERENCE)]
    planned = [
        (impl, case_id, reference) for impl, reference in runs for case_id in SUMMARY_CASES if case_id != "spec-example"
    ]
    planned += [(PYTHON, "bom-crlf", "0.32.18@node")] + [
        (impl, "spec-example", "golden") for impl in (PYTHON, SERVER, PLANTED)
    ]
    results = []
    for impl, case_id, reference in planned:
        status = status_of.get((impl, case_id, reference), Status.PASS)
        reference_outcome = None if reference == "golden" else ok
        reasons = [] if status == Status.PASS else [f"{status} (made up)"]
        results.append(
            case(
                case_id,
                status,
                SUMMARY_CASES[case_id],
                reference_outcome,
                ok,
                label=reference,
                implementation=impl,
                reasons=reasons,
            )
        )
    return results
