"""The matrix (library of `conformance matrix` and `conformance drift`): the corpus against every pinned
release (and any other reference, runtime or locale) in one run, the cases x references matrix, the fields each
reference could be compared on, the drift between neighbouring references, and the CI gate.

One Session serves the run: each case's repository is materialized once and compiled by every
reference, each release judged against its own Python profile (harness.runners.references.profile_for_reference).
`--latest` asks the npm registry and PyPI for the newest release; nothing else here touches the
network beyond fetching pinned tarballs and wheels.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.acquire.releases import bundle_version, fetcher
from harness.cases.load import load_scenarios
from harness.core.fields import COMPARED_FIELDS
from harness.core.model import CaseResult, Outcome, RunReport, Scenario, ScenarioError, is_golden
from harness.core.reference import ReferenceSpec, default_reference, pinned_references
from harness.core.registries import REGISTRY_NAMES, pinned_versions
from harness.core.versions import version_key
from harness.report.stored import full_entries
from harness.run.corpus import RunOptions, run_corpus
from harness.runners.references import with_baselines
from harness.tools.releases.drift import DriftReport, drift_report, neighbour_pairs
from harness.tools.releases.gate import GateResult, evaluate


def release_order() -> list[str]:
    """Every pinned version (npm and PyPI), oldest first."""
    return sorted({spec.value for spec in pinned_references()}, key=version_key)


@dataclass(frozen=True)
class Latest:
    """The newest letta-code release on either registry, and the digest that registry publishes."""

    spec: ReferenceSpec
    digest: str  # npm: sha512 integrity; PyPI: the wheel's sha256

    @property
    def pinned(self) -> bool:
        return self.spec.value in pinned_versions(self.spec.kind)


def discover_latest() -> Latest:
    """The newest release on every registry (each one's fetcher: `npm view`, `pip install --dry-run --report`);
    on a tie the first registry's in table order (npm's, whose label bare versions already mean)."""
    newest: Latest | None = None
    for name in REGISTRY_NAMES:
        version, digest = fetcher(name).latest()
        if newest is None or version_key(version) > version_key(newest.spec.value):
            newest = Latest(ReferenceSpec(name, version), digest)
    assert newest is not None  # the table is never empty
    return newest


def matrix_specs(
    extra: list[str], runtimes: list[str], locales: list[str], latest: ReferenceSpec | None = None
) -> list[ReferenceSpec]:
    """Every pinned release (oldest first), then `latest` and `extra` references; each under every
    runtime, and every non-bun runtime also under every locale. Baselines (bun) come first."""
    bases = pinned_references()
    if latest is not None and latest not in bases:
        bases.append(latest)
    for text in extra:
        spec = ReferenceSpec.parse(text)
        if spec not in bases:
            bases.append(spec)
    specs: list[ReferenceSpec] = []
    for runtime in runtimes:
        for base in bases:
            if base.is_variant:
                continue
            specs.append(base.with_runtime(runtime) if runtime != "bun" else base)
            if runtime != "bun":
                specs += [base.with_runtime(runtime, locale) for locale in locales]
    specs += [b for b in bases if b.is_variant]
    return with_baselines(list(dict.fromkeys(specs)))


def field_comparison_summary(results: list[CaseResult]) -> dict[str, dict[str, Any]]:
    """Per reference, per field: how many cases compared it byte for byte, as absent on both sides,
    or found it on one side only; and a one-word summary (`compared`, `compared-as-absent`, `mixed`)."""
    out: dict[str, dict[str, Any]] = {}
    for result in results:
        if is_golden(result.reference):
            continue
        per_ref = out.setdefault(result.reference, {name: Counter() for name in COMPARED_FIELDS})
        for name, state in result.compared.items():
            per_ref.setdefault(name, Counter())[state] += 1
    summary: dict[str, dict[str, Any]] = {}
    for reference, per_field in out.items():
        summary[reference] = {}
        for name, counts in per_field.items():
            states = {k: v for k, v in counts.items() if k != "thrown"}
            word = next(iter(states)) if len(states) == 1 else ("not-compared" if not states else "mixed")
            summary[reference][name] = {"summary": word, "cases": dict(sorted(counts.items()))}
    return summary


def matrix_json(results: list[CaseResult], specs: list[ReferenceSpec], seconds: float | None) -> dict[str, Any]:
    labels = [s.label for s in specs]
    cases: dict[str, dict[str, str]] = {}
    for result in sorted(results, key=lambda r: r.case_id):
        cases.setdefault(result.case_id, {})[result.reference] = result.status
    per_reference = {label: dict(Counter(r.status for r in results if r.reference == label)) for label in labels}
    runtime_effects = [
        {
            "case": r.case_id,
            "reference": r.reference,
            "baseline": r.baseline,
            "fields": [d.field for d in r.runtime_diffs],
        }
        for r in sorted(results, key=lambda r: (r.reference, r.case_id))
        if r.runtime_diffs
    ]
    data: dict[str, Any] = {
        "references": [
            {
                "label": s.label,
                "kind": s.kind,
                "value": s.value,
                "runtime": s.runtime,
                "locale": s.locale,
                "baseline": s.baseline.label if s.is_variant else None,
                "profile": next((r.profile for r in results if r.reference == s.label), None),
                "counts": per_reference[s.label],
            }
            for s in specs
        ],
        "cases": cases,
        "compared_fields": field_comparison_summary(results),
        "runtime_effects": runtime_effects,
    }
    if seconds is not None:
        data["timing"] = {"seconds": round(seconds, 1)}
    return data


def reference_outcomes(results: list[CaseResult]) -> dict[tuple[str, str], Outcome]:
    return {(r.case_id, r.reference): r.reference_outcome for r in results if r.reference_outcome is not None}


def spec_version(specs: list[ReferenceSpec], label: str) -> str | None:
    """The release version behind a reference label: the npm version, or a bundle's package.json version."""
    spec = next((s for s in specs if s.label == label), None)
    if spec is None or spec.is_release:
        return spec.value if spec else None
    return bundle_version(Path(spec.value).expanduser()) if spec.kind == "bundle" else None


def gate_pair(specs: list[ReferenceSpec], latest: ReferenceSpec | None) -> tuple[str, str] | None:
    """previous -> new for the gate (reference labels): the pinned default -> `latest` when that is
    another release, else the two newest baseline releases."""
    default = ReferenceSpec.parse(default_reference())
    if latest is not None and latest.value != default.value:
        return default.label, latest.label
    releases = [p for p in neighbour_pairs(specs, release_order()) if p.kind == "release"]
    return (releases[-1].before.label, releases[-1].after.label) if releases else None


def drift_from_report(data: dict[str, Any], case_paths: list[Path]) -> DriftReport:
    """Recompute drift from a matrix report.json's data (report.stored.read_report; no reference is run again)."""
    outcomes = outcomes_from_report(data)
    labels = [r["label"] for r in data.get("matrix", {}).get("references", [])]
    if not labels:
        labels = sorted({reference for _, reference in outcomes if not is_golden(reference)})
    specs = [ReferenceSpec.from_label(label) for label in labels]
    scenarios: list[Scenario] = load_scenarios(case_paths).scenarios
    return drift_report(outcomes, scenarios, specs, release_order())


def outcomes_from_report(data: dict[str, Any]) -> dict[tuple[str, str], Outcome]:
    """Each result's reference outcome, keyed (case, reference), from report.json data with its long values put
    back: the values that differ within a case are kept in `outputs` (report.stored), so drift read from a
    report describes a change byte for byte, as a live run does."""
    outcomes: dict[tuple[str, str], Outcome] = {}
    for r in full_entries(data, expand=True):
        o = r.get("reference_outcome")
        if o:
            outcomes[(r["case"], r["reference"])] = Outcome(
                o["status"], o.get("record"), o.get("thrown"), o.get("error")
            )
    return outcomes


def with_explainers(everything: list[Scenario], selected: list[Scenario]) -> tuple[list[Scenario], int]:
    """The selected cases, then every case not selected that explains drift between releases (`explains`), and
    how many of those were added: drift is judged on what runs, so its explaining cases run too (else it reads
    as unexplained)."""
    chosen = {s.id for s in selected}
    explainers = [s for s in everything if s.explains and s.id not in chosen]
    return selected + explainers, len(explainers)


@dataclass
class MatrixRun:
    """A matrix's report (with its `matrix`, `drift` and `gate` sections), its drift, its gate and wall seconds."""

    report: RunReport
    drift: DriftReport
    gate: GateResult | None
    seconds: float

    @property
    def ok(self) -> bool:
        """With the gate, the gate's verdict (and every file loaded); else every result passed and no drift is
        unexplained."""
        if self.gate is not None:
            return self.gate.ok and not self.report.load_errors
        return self.report.ok and self.drift.ok


def run_matrix(
    scenarios: list[Scenario],
    options: RunOptions,
    load_errors: list[ScenarioError],
    *,
    gate: bool = False,
    latest: ReferenceSpec | None = None,
    discovered: dict[str, str] | None = None,
) -> MatrixRun:
    """The cases against `options.references` reference by reference (harness.run.by_reference); the drift between
    neighbouring releases, the gate (with `gate`: the previous pinned release against the newest, or `latest`) on
    the first implementation's results, and the report's `matrix` (`discovered`: what `--latest` found), `drift`
    and `gate` sections."""
    started = time.perf_counter()
    report = run_corpus(scenarios, replace(options, by_reference=True), load_errors)
    seconds = time.perf_counter() - started
    specs, impls, results = list(options.references), list(options.implementations), report.results
    meta = report.extra["run"]  # a matrix names its implementations by label, and reads no expectations file
    meta["implementations"] = list(dict.fromkeys(entry["implementation"] for entry in meta["implementations"]))
    del meta["expectations"]
    drift = drift_report(reference_outcomes(results), scenarios, specs, release_order())
    first_impl = [r for r in results if r.implementation == impls[0].label]  # the matrix and gate: the first --impl
    judged: GateResult | None = None
    if gate and (pair := gate_pair(specs, latest)):
        judged = evaluate(first_impl, *pair, new_version=spec_version(specs, pair[1]))
    report.extra["matrix"] = matrix_json(first_impl, specs, seconds if options.timing else None)
    report.extra["drift"] = drift.to_json()
    if len(impls) > 1:
        report.extra["matrix"]["implementations"] = {
            impl.label: matrix_json([r for r in results if r.implementation == impl.label], specs, None)["cases"]
            for impl in impls
        }
    if judged is not None:
        report.extra["gate"] = judged.to_json()
    if discovered:
        report.extra["matrix"]["latest"] = discovered
    return MatrixRun(report, drift, judged, seconds)
