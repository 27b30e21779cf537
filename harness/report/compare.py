"""`conformance compare-reports OLD NEW`: what changed between two runs, the question a reviewer of a
port change asks: regressions (passed, now failing), fixes (failed, now passing), new and gone results,
and other status changes. Reads two report.json files; runs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.model import DEFAULT_IMPLEMENTATION, Status
from harness.report.stored import read_report
from harness.versions import release_key

Key = tuple[str, str]  # (case, reference), or (case, `implementation @ reference`) in a run of several implementations


@dataclass
class Comparison:
    regressions: list[tuple[Key, str, str]] = field(default_factory=list)  # (key, old status, new status)
    fixes: list[tuple[Key, str, str]] = field(default_factory=list)
    changed: list[tuple[Key, str, str]] = field(default_factory=list)  # other status changes
    new: list[tuple[Key, str]] = field(default_factory=list)
    gone: list[tuple[Key, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No regression and no new failing result."""
        return not self.regressions and not any(Status(s).failing for _, s in self.new)

    def lines(self) -> list[str]:
        out = []
        for title, rows in (("regressions", self.regressions), ("fixes", self.fixes), ("other changes", self.changed)):
            out += [f"{title}: {len(rows)}"] + [f"  {c} [{r}]: {old} -> {new}" for (c, r), old, new in rows]
        out += [f"new results: {len(self.new)}"] + [f"  {c} [{r}]: {s}" for (c, r), s in self.new]
        out += [f"results no longer present: {len(self.gone)}"] + [f"  {c} [{r}]: was {s}" for (c, r), s in self.gone]
        return out


def _statuses(data: dict[str, Any]) -> dict[Key, str]:
    """Each result's status by case and reference. A report of one implementation (`--impl`) is keyed by
    reference alone, so two runs of different implementations compare result for result."""
    several = len({r.get("implementation", DEFAULT_IMPLEMENTATION) for r in data["results"]}) > 1

    def column(r: dict[str, Any]) -> str:
        return f"{r.get('implementation', DEFAULT_IMPLEMENTATION)} @ {r['reference']}" if several else r["reference"]

    return {(r["case"], column(r)): r["status"] for r in data["results"]}


def _order(key: Key) -> tuple[str, Any]:
    return key[0], release_key(key[1].split(" @ ")[-1])


def compare_reports(old_path: Any, new_path: Any) -> Comparison:
    """Compare two report.json files (or the directories holding them); ReportError (merge.MergeError) when one is
    not a report."""
    old, new = _statuses(read_report(old_path)[1]), _statuses(read_report(new_path)[1])
    result = Comparison()
    for key in sorted(set(old) | set(new), key=_order):
        if key not in old:
            result.new.append((key, new[key]))
        elif key not in new:
            result.gone.append((key, old[key]))
        elif old[key] != new[key]:
            was, now = Status(old[key]).failing, Status(new[key]).failing
            target = result.regressions if now and not was else result.fixes if was and not now else result.changed
            target.append((key, old[key], new[key]))
    return result
