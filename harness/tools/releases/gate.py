"""The CI gate: a case that passed against the previous pinned reference must not fail against the new one.

Pure logic over CaseResults; `conformance matrix --gate` runs it and prints what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.model import CaseResult, Status
from harness.core.reference import cli_of_label
from letta_profiles import profile_name_for_release

GOOD = (Status.PASS, Status.KNOWN)


@dataclass
class Regression:
    case: str
    path: str
    previous_status: Status
    new_status: Status
    fields: list[str]
    reasons: list[str]

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass
class GateResult:
    previous: str
    new: str
    new_profile: str
    new_has_profile: bool
    new_version: str  # the release version of `new` (a bundle's package.json version), or its label
    regressions: list[Regression] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # cases that ran against `previous` only

    @property
    def ok(self) -> bool:
        return not self.regressions

    def advice(self) -> list[str]:
        """What a maintainer does next, most likely fix first."""
        if self.ok:
            return []
        lines: list[str] = []
        content_regressions = [r for r in self.regressions if r.new_status != Status.ERROR]
        errors = [r for r in self.regressions if r.new_status == Status.ERROR]
        if errors:
            lines.append(
                f"{len(errors)} case(s) could not run against {self.new}: fix the reference set-up first "
                "(the reasons above name the error); an error is never a pass."
            )
        if content_regressions and not self.new_has_profile:
            version = self.new_version
            named = version if version == self.new else f"{version} ({self.new})"
            lines.append(
                f"letta-code {named} has no Python profile (it was compared with {self.new_profile}). "
                f"If its compiler changed, add a profile whose releases include {version!r} to "
                f"letta_profiles/__init__.py (PUBLISHED and PROFILE_RELEASES), its behaviours to "
                f"memfs_prompt/profiles.py and its row to docs/profiles.md; if it did not, add {version!r} to the "
                f"releases of {self.new_profile} there. Pin the release in reference/manifest.json and add cases "
                f"that pin the change with `explains: [{{since: {version!r}, ...}}]`."
            )
        stale = [r for r in content_regressions if r.new_status == Status.STALE]
        if stale:
            lines.append(
                "stale divergences (" + ", ".join(r.case for r in stale) + f"): upstream {self.new} no longer "
                "diverges; narrow the divergence's `references` so it stops at the previous release."
            )
        plain = [r for r in content_regressions if r.new_status != Status.STALE]
        if plain:
            lines.append(
                "for each failing case: if the port should follow the new upstream behaviour, change the port "
                f"(in a new profile); if it should not, or not yet, add a divergence to the case with "
                f"`references: [{self.new!r}]`, the fields listed above, a kind and a reason (docs/cases.md)."
            )
        reference = cli_of_label(self.new)
        lines.append(f"reproduce one: conformance run CASE_PATH --reference {reference} -k CASE_ID")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "previous": self.previous,
            "new": self.new,
            "new_profile": self.new_profile,
            "new_has_profile": self.new_has_profile,
            "new_version": self.new_version,
            "ok": self.ok,
            "regressions": [r.to_json() for r in self.regressions],
            "not_run": self.not_run,
            "advice": self.advice(),
        }


def has_profile(version: str) -> bool:
    try:
        profile_name_for_release(version)
    except KeyError:
        return False
    return True


def evaluate(results: list[CaseResult], previous: str, new: str, new_version: str | None = None) -> GateResult:
    """Regressions from `previous` to `new` (reference labels): good before, failing now. `new_version`
    is the release version behind `new` when the label is not one (a bundle)."""
    by_case: dict[str, dict[str, CaseResult]] = {}
    for result in results:
        by_case.setdefault(result.case_id, {})[result.reference] = result
    new_profile = next((r.profile for r in results if r.reference == new), "")
    version = new_version or new
    gate = GateResult(previous, new, new_profile, has_profile(version), version)
    for case_id in sorted(by_case):
        row = by_case[case_id]
        before, after = row.get(previous), row.get(new)
        if before is None or before.status not in GOOD:
            continue
        if after is None:
            gate.not_run.append(case_id)
            continue
        if after.status.failing:
            fields = sorted({d.field for d in after.diffs})
            gate.regressions.append(
                Regression(case_id, after.path, before.status, after.status, fields, list(after.reasons))
            )
    return gate


def render(gate: GateResult) -> str:
    head = f"gate {gate.previous} -> {gate.new} (profile {gate.new_profile}): "
    if gate.ok:
        return head + "ok, no case that passed against the previous reference fails against the new one\n"
    lines = [
        head + f"FAILED: {len(gate.regressions)} case(s) passed against {gate.previous} and fail against {gate.new}"
    ]
    for r in gate.regressions:
        lines.append(
            f"  {r.case}: {r.previous_status} -> {r.new_status}"
            + (f" ({', '.join(r.fields)})" if r.fields else "")
            + f"  {r.path}"
        )
        lines += [f"    {reason}" for reason in r.reasons[:2]]
    lines.append("what to do:")
    lines += [f"  - {line}" for line in gate.advice()]
    return "\n".join(lines) + "\n"
