"""`conformance compare-reports OLD NEW`: what changed between two runs, the question a reviewer of a
port change asks. Reads two report.json files; runs nothing.

Owns the direction of every change of a result's status (`DIRECTIONS`, one row per pair of statuses): a
regression (the implementation does worse), a fix (it agrees where it failed), a fix whose expectation is now
stale (it agrees, but an entry still says it diverges: a fix, and the entry must go), a failure newly expected
(an expectations entry now covers it: not a fix), and so on; and which directions make the comparison fail
(`Direction.worse`). Also new and gone results, and a warning when the two reports ran different
implementations.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from harness.core.model import DEFAULT_IMPLEMENTATION, Status
from harness.core.reference import release_key
from harness.report.stored import read_report

Key = tuple[str, str]  # (case, reference), or (case, `implementation @ reference`) in a run of several implementations


class Direction(enum.Enum):
    """What a change of status means, in the order the comparison lists them: (title, what it means, worse)."""

    REGRESSION = ("regressions", "the implementation does worse: it agreed and now diverges, or now cannot run", True)
    FIX = ("fixes", "failed before, now agree", False)
    FIX_STALE = (
        "fixes with a stale expectation",
        "now agree, but an expectation still says they diverge: a fix; remove the stale entry from the "
        "expectations file (`conformance expectations update`) or the case's divergences, or the run keeps failing",
        False,
    )
    NEWLY_EXPECTED = ("failures newly expected", "still fail, now listed as known divergences: not fixes", False)
    NO_LONGER_EXPECTED = ("failures no longer expected", "still diverge, and no expectation covers them now", True)
    STALE_REMOVED = (
        "stale expectations removed",
        "agreed before and now; the entry that expected a divergence is gone",
        False,
    )
    NEWLY_STALE = (
        "agreeing results newly expected to diverge",
        "agree as before, but a new expectation says they diverge: remove it",
        True,
    )
    STILL_FAILING = ("still failing, differently", "a divergence became an error, or an error a divergence", False)
    NOW_COMPARED = (
        "now compared",
        "not compared before (not applicable, or runtime drift), now agree or diverge as expected",
        False,
    )
    NOW_COMPARED_FAILING = (
        "now compared, and failing",
        "not compared before (not applicable, or runtime drift), now fail",
        True,
    )
    LOST = ("no longer compared, though they agreed", "agreed before, now not applicable: coverage lost", True)
    UNCOMPARED = (
        "no longer compared",
        "now not applicable, or runtime drift (the variant's upstream output differs from bun's)",
        False,
    )
    STILL_UNCOMPARED = ("still not compared", "not applicable and runtime drift, one for the other", False)

    @property
    def title(self) -> str:
        return str(self.value[0])

    @property
    def meaning(self) -> str:
        return str(self.value[1])

    @property
    def worse(self) -> bool:
        """Whether a change in this direction makes the comparison fail (exit 1)."""
        return bool(self.value[2])


_D = Direction  # the statuses and directions by short names, so the table reads as a grid
P, F, K, S, E, R, N = (
    Status.PASS,
    Status.FAIL,
    Status.KNOWN,
    Status.STALE,
    Status.ERROR,
    Status.RUNTIME,
    Status.NOT_APPLICABLE,
)

#: The direction of every change of status, (old, new) -> Direction: the one table (tests/test_compare_reports.py
#: checks every row).
DIRECTIONS: dict[tuple[Status, Status], Direction] = {
    (P, F): _D.REGRESSION,
    (P, K): _D.REGRESSION,
    (P, S): _D.NEWLY_STALE,
    (P, E): _D.REGRESSION,
    (P, R): _D.UNCOMPARED,
    (P, N): _D.LOST,
    (F, P): _D.FIX,
    (F, K): _D.NEWLY_EXPECTED,
    (F, S): _D.FIX_STALE,
    (F, E): _D.STILL_FAILING,
    (F, R): _D.UNCOMPARED,
    (F, N): _D.UNCOMPARED,
    (K, P): _D.FIX,
    (K, F): _D.NO_LONGER_EXPECTED,
    (K, S): _D.FIX_STALE,
    (K, E): _D.REGRESSION,
    (K, R): _D.UNCOMPARED,
    (K, N): _D.UNCOMPARED,
    (S, P): _D.STALE_REMOVED,
    (S, F): _D.REGRESSION,
    (S, K): _D.REGRESSION,
    (S, E): _D.REGRESSION,
    (S, R): _D.UNCOMPARED,
    (S, N): _D.LOST,
    (E, P): _D.FIX,
    (E, F): _D.STILL_FAILING,
    (E, K): _D.NEWLY_EXPECTED,
    (E, S): _D.FIX_STALE,
    (E, R): _D.UNCOMPARED,
    (E, N): _D.UNCOMPARED,
    (R, P): _D.NOW_COMPARED,
    (R, F): _D.NOW_COMPARED_FAILING,
    (R, K): _D.NOW_COMPARED,
    (R, S): _D.NOW_COMPARED_FAILING,
    (R, E): _D.NOW_COMPARED_FAILING,
    (R, N): _D.STILL_UNCOMPARED,
    (N, P): _D.NOW_COMPARED,
    (N, F): _D.NOW_COMPARED_FAILING,
    (N, K): _D.NOW_COMPARED,
    (N, S): _D.NOW_COMPARED_FAILING,
    (N, E): _D.NOW_COMPARED_FAILING,
    (N, R): _D.STILL_UNCOMPARED,
}

#: Listed even when empty: the two questions a reviewer always asks.
ALWAYS_LISTED = (Direction.REGRESSION, Direction.FIX)


@dataclass
class Comparison:
    """What changed between two reports: status changes by direction, new and gone results, warnings."""

    changes: dict[Direction, list[tuple[Key, str, str]]] = field(default_factory=dict)  # (key, old, new) by direction
    new: list[tuple[Key, str]] = field(default_factory=list)
    gone: list[tuple[Key, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def of(self, direction: Direction) -> list[tuple[Key, str, str]]:
        return self.changes.get(direction, [])

    @property
    def regressions(self) -> list[tuple[Key, str, str]]:
        return self.of(Direction.REGRESSION)

    @property
    def fixes(self) -> list[tuple[Key, str, str]]:
        return self.of(Direction.FIX)

    @property
    def ok(self) -> bool:
        """No change in a worse direction (DIRECTIONS) and no new failing result."""
        return not any(d.worse and rows for d, rows in self.changes.items()) and not any(
            Status(s).failing for _, s in self.new
        )

    def lines(self) -> list[str]:
        out = []
        for direction in Direction:
            rows = self.of(direction)
            if rows or direction in ALWAYS_LISTED:
                out.append(f"{direction.title}: {len(rows)}" + (f" ({direction.meaning})" if rows else ""))
                out += [f"  {c} [{r}]: {old} -> {new}" for (c, r), old, new in rows]
        out += [f"new results: {len(self.new)}"] + [f"  {c} [{r}]: {s}" for (c, r), s in self.new]
        out += [f"results no longer present: {len(self.gone)}"] + [f"  {c} [{r}]: was {s}" for (c, r), s in self.gone]
        return out


def _implementations(data: dict[str, Any]) -> list[str]:
    return sorted({r.get("implementation", DEFAULT_IMPLEMENTATION) for r in data["results"]})


def _statuses(data: dict[str, Any]) -> dict[Key, str]:
    """Each result's status by case and reference. A report of one implementation (`--impl`) is keyed by
    reference alone, so two runs of different implementations compare result for result (with a warning)."""
    several = len(_implementations(data)) > 1

    def column(r: dict[str, Any]) -> str:
        return f"{r.get('implementation', DEFAULT_IMPLEMENTATION)} @ {r['reference']}" if several else r["reference"]

    return {(r["case"], column(r)): r["status"] for r in data["results"]}


def _order(key: Key) -> tuple[str, Any]:
    return key[0], release_key(key[1].split(" @ ")[-1])


def implementation_warning(old: list[str], new: list[str]) -> str | None:
    """The warning for two reports of different implementations, naming both sides; None when they ran the same."""
    if old == new:
        return None
    if len(old) == 1 and len(new) == 1:
        how = "each result of the one is compared with the same case's result of the other"
    else:
        how = "the results of an implementation only one of them ran are listed as new or gone"
    return (
        f"the two reports ran different implementations: the old one {', '.join(old)}, the new one "
        f"{', '.join(new)}; {how}, so the changes below are between implementations, not between runs "
        "of one"
    )


def compare_reports(old_path: Any, new_path: Any) -> Comparison:
    """Compare two report.json files (or the directories holding them); ReportError (merge.MergeError) when one is
    not a report."""
    old_data, new_data = read_report(old_path)[1], read_report(new_path)[1]
    old, new = _statuses(old_data), _statuses(new_data)
    result = Comparison()
    if warning := implementation_warning(_implementations(old_data), _implementations(new_data)):
        result.warnings.append(warning)
    for key in sorted(set(old) | set(new), key=_order):
        if key not in old:
            result.new.append((key, new[key]))
        elif key not in new:
            result.gone.append((key, old[key]))
        elif old[key] != new[key]:
            direction = DIRECTIONS[Status(old[key]), Status(new[key])]
            result.changes.setdefault(direction, []).append((key, old[key], new[key]))
    return result
