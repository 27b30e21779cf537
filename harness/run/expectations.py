"""Expectations: an implementation's known failures, in a YAML file of its own outside the corpus.

Owns the expectations format (docs/expectations.md; harness/run/expectations.schema.json): reading it
strictly (the case loader's YAML rules, every refusal with file, line and fix), what an entry names (a
case, a case glob, a rule or a tag: `Expectation.matches`), which recorded divergences apply to one result
(`Expectations.divergences_for`), and the check of a file against the loaded corpus
(`Expectations.check_corpus`); writing it back is harness.run.expectations_write's. Which result an entry's
reference text matches, and which texts are refused, is the rule a case's divergences follow too
(harness.acquire.manifest.recorded_label). Turning a recorded divergence into known or stale is verdict.judge's.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from harness.cases.schemacheck import validate
from harness.cases.strict import parse_strict, read_utf8
from harness.cases.yamlnodes import line_at
from harness.core.model import CaseResult, Divergence, Scenario, ScenarioError, Status, is_golden
from harness.core.reference import ReferenceSpec, recorded_label
from harness.runners.implementations import ImplSpec

SCHEMA_FILE = "harness/run/expectations.schema.json"
ANY = "*"  # every reference, or every profile
UNEXPLAINED = "unexplained"  # the kind of an entry `conformance expectations update` wrote: nobody has said why yet
_OBSERVATION = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*(:.+)?$")  # a lifecycle observation: ui_messages, system_has:x


class ExpectationsError(ScenarioError):
    """An expectations file, or one of its entries, that cannot be used; names the file, the line and the fix."""


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(resources.files("harness.run").joinpath("expectations.schema.json").read_text(encoding="utf-8"))


@functools.cache
def record_fields() -> tuple[str, ...]:
    """The record fields a divergence may name (a case's `divergences`, harness/cases/schema.json: one list)."""
    cases = json.loads(resources.files("harness.cases").joinpath("schema.json").read_text(encoding="utf-8"))
    return tuple(cases["$defs"]["divergence"]["properties"]["fields"]["items"]["enum"])


def kinds() -> tuple[str, ...]:
    """The kinds an entry may have: those of a case's divergences, and `unexplained`."""
    return tuple(_schema()["$defs"]["entry"]["properties"]["kind"]["enum"])


def reference_label(text: str) -> str:
    """The result label an entry's reference text matches: what `--reference TEXT` would be labelled
    (ReferenceSpec.parse(TEXT).label: `0.34.12` and `pypi:0.34.12` are `pypi:0.34.12`, `npm:0.32.18` is
    `0.32.18`); `*` and `golden` (the spec's bytes) stay as they are. A text --reference refuses raises ValueError.
    The loader reads an entry with manifest.recorded_label, which also refuses a release that is not pinned."""
    if text == ANY or is_golden(text):
        return text
    return ReferenceSpec.parse(text).label


def reference_spelling(label: str) -> str:
    """The text to write for a result's reference label: one that `reference_label` reads back as that label
    (`npm:0.32.18`, `pypi:0.34.12`), whichever registry a bare version means today."""
    if label == ANY or is_golden(label):
        return label
    text = ReferenceSpec.from_label(label).cli
    return text if reference_label(text) == label else label


SELECTORS = ("case", "cases", "rule", "tag")  # what an entry names: one case, a glob of case ids, a rule, a tag


@dataclass(frozen=True)
class Expectation:
    """One entry: the cases it names (`case`, or a `cases` glob, a `rule` or a `tag`: a broad entry) differ from
    `references` (labels; empty: any) under `profiles` (empty: any) in `fields`, or fail (`error`: "" any error,
    else text the error contains)."""

    case: str
    fields: tuple[str, ...]
    kind: str
    reason: str
    references: tuple[str, ...] = ()  # as written
    profiles: tuple[str, ...] = ()
    link: str | None = None
    line: int = 0
    cases: str | None = None
    rule: str | None = None
    tag: str | None = None
    error: str | None = None
    labels: tuple[str, ...] = field(init=False, compare=False)  # the result labels `references` names (`*`: any)

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(reference_label(text) for text in self.references))

    @property
    def selector(self) -> tuple[str, str]:
        """(key, value) of what it names: ("case", id), ("cases", glob), ("rule", id) or ("tag", tag)."""
        for key, value in (("cases", self.cases), ("rule", self.rule), ("tag", self.tag)):
            if value is not None:
                return key, value
        return "case", self.case

    @property
    def broad(self) -> bool:
        return self.selector[0] != "case"

    def matches(self, scenario: Scenario) -> bool:
        key, value = self.selector
        if key == "cases":
            return fnmatch.fnmatchcase(scenario.id, value)
        if key == "rule":
            return value in scenario.rules
        if key == "tag":
            return value in scenario.tags
        return scenario.id == value

    def applies(self, label: str, profile: str) -> bool:
        return _names(self.labels, label) and _names(self.profiles, profile)

    def divergence(self, source: str = "") -> Divergence:
        """As the verdict reads it (harness.verdict.judge.divergence_verdict); a profile-only entry names `*`;
        `source`: the file and line it is written at."""
        return Divergence(
            self.labels or (ANY,), self.fields, self.kind, self.reason, self.link, source, self.broad, self.error
        )


def _names(listed: tuple[str, ...], name: str) -> bool:
    return not listed or ANY in listed or name in listed


def _overlap(one: tuple[str, ...], other: tuple[str, ...]) -> str | None:
    """A name both lists apply to (`*`: any), or None."""
    if not one or ANY in one:
        return other[0] if other and ANY not in other else ANY
    if not other or ANY in other:
        return one[0]
    return next((name for name in one if name in other), None)


@dataclass(frozen=True)
class Expectations:
    """A loaded expectations file: the implementation it is for (`implementation`, as --impl spells it, and/or
    `name`, the name its hello gives), and its entries in file order."""

    implementation: str | None
    path: Path
    entries: tuple[Expectation, ...]
    description: str | None = None
    name: str | None = None
    _by_case: dict[str, list[Expectation]] = field(init=False, repr=False, compare=False)
    _broad: tuple[Expectation, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_case: dict[str, list[Expectation]] = {}
        for entry in self.entries:
            if not entry.broad:
                by_case.setdefault(entry.case, []).append(entry)
        object.__setattr__(self, "_by_case", by_case)
        object.__setattr__(self, "_broad", tuple(entry for entry in self.entries if entry.broad))

    @property
    def names(self) -> str:
        """The implementation as the file names it, for messages."""
        return " / ".join(
            f"{key} {value}" for key, value in (("implementation", self.implementation), ("name", self.name)) if value
        )

    def divergences_for(self, scenario: Scenario, reference_label: str, profile: str) -> tuple[Divergence, ...]:
        """The recorded divergences of one result: the entries that name its case (at most one applies: the
        loader refuses entries of one case that overlap) and the broad entries (rule, tag, glob) that cover it."""
        found = [*self._by_case.get(scenario.id, ()), *(e for e in self._broad if e.matches(scenario))]
        return tuple(e.divergence(f"{self.path}:{e.line}") for e in found if e.applies(reference_label, profile))

    def check_corpus(self, scenarios: Iterable[Scenario]) -> list[ExpectationsError]:
        """Entries the loaded corpus contradicts: a case it does not have (removed or renamed: a stale entry), a
        rule, tag or glob that names no case, or, for a compile case, a field no record has. Pass every case
        loaded, not a -k selection of them."""
        loaded = list(scenarios)
        known = {scenario.id: scenario for scenario in loaded}
        problems = []
        for entry in self.entries:
            key, value = entry.selector
            matched = [s for s in loaded if entry.matches(s)] if entry.broad else [known.get(entry.case)]
            if not any(matched):
                if entry.broad:
                    problems.append(
                        self._error(
                            entry,
                            f"{key} {value!r} names no case of the corpus, so the entry "
                            "explains nothing: remove it, or correct it",
                        )
                    )
                    continue
                near = difflib.get_close_matches(entry.case, sorted(known), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(
                    self._error(
                        entry,
                        f"case {entry.case!r} is not in the corpus: it was removed or "
                        f"renamed, so the entry is stale; remove it{hint}",
                    )
                )
                continue
            if any(s is not None and s.kind == "compile" for s in matched):
                for name in entry.fields:
                    if name not in record_fields() and name != ANY:
                        what = (
                            f"case {value!r} is a compile case"
                            if key == "case"
                            else f"{key} {value!r} names compile cases"
                        )
                        problems.append(
                            self._error(entry, f"{what} and their records have no field {name!r}{_field_hint(name)}")
                        )
        return problems

    def explaining_nothing(
        self, scenarios: Iterable[Scenario], results: Iterable[CaseResult]
    ) -> list[ExpectationsError]:
        """Broad entries (rule, tag, glob) that covered results of this implementation in a run of the whole corpus
        and explained none of them (nothing differs the way they say): stale, as a case entry that no longer
        differs is; a failure of the run, so the file stays true."""
        by_id = {scenario.id: scenario for scenario in scenarios}
        mine = [
            r
            for r in results
            if r.implementation == self.implementation
            and r.case_id in by_id
            and r.status not in (Status.NOT_APPLICABLE, Status.RUNTIME)
        ]
        problems = []
        for entry in (e for e in self.entries if e.broad):
            covered = [r for r in mine if entry.matches(by_id[r.case_id]) and entry.applies(r.reference, r.profile)]
            if covered and not any(_explained(entry, r) for r in covered):
                key, value = entry.selector
                problems.append(
                    self._error(
                        entry,
                        f"{key} {value!r} covered {len(covered)} results of this run and "
                        "none differs the way it says, so the entry is stale: run "
                        f"`conformance expectations update REPORT --out {self.path}` "
                        "(REPORT: this run's --report DIR), or remove it",
                    )
                )
        return problems

    def _error(self, entry: Expectation, message: str) -> ExpectationsError:
        return ExpectationsError(self.path, entry.line or None, message)


def _explained(entry: Expectation, result: CaseResult) -> bool:
    """Whether a result differs, or fails, the way a broad entry says."""
    failed = result.impl_outcome is not None and result.impl_outcome.status == "error"
    if entry.error is not None:
        return failed and result.impl_outcome is not None and entry.error in str(result.impl_outcome.error)
    differing = {d.field for d in result.diffs}
    differing |= {d.get("observation") for row in result.turns for d in row.get("diffs") or []}
    return bool(differing) and (ANY in entry.fields or bool(differing & set(entry.fields)))


def _field_hint(name: str) -> str:
    near = difflib.get_close_matches(name, list(record_fields()), n=1)
    return f"; did you mean {near[0]!r}?" if near else f"; use one of {', '.join(record_fields())}"


def load_expectations(path: Path) -> Expectations:
    """Read and check one expectations file; raises ExpectationsError naming the file, the line and the fix."""
    try:
        root, data = parse_strict(read_utf8(path), path, "expectations files")
        if not isinstance(data, dict) or root is None:
            raise ExpectationsError(path, 1, "an expectations file is a mapping with implementation and expectations")
        validate(path, root, data, _schema(), SCHEMA_FILE)
    except ExpectationsError:
        raise
    except ScenarioError as error:  # the case loader's YAML and schema rules
        where = f"{path}:{error.line}: " if error.line else f"{path}: "
        raise ExpectationsError(path, error.line, str(error).removeprefix(where)) from None
    except OSError as error:
        raise ExpectationsError(path, None, f"cannot read it ({error.strerror})") from None
    if "implementation" not in data and "name" not in data:
        raise ExpectationsError(
            path,
            1,
            "say which implementation the file is for: `name: my-port` (the name its "
            "hello gives, info.implementation; docs/protocol.md) or `implementation: "
            "cmd:./my-port` (as --impl spells it), or both",
        )
    if "implementation" in data:
        try:
            ImplSpec.parse(data["implementation"])
        except ValueError as error:
            raise ExpectationsError(path, line_at(root, ["implementation"]), f"implementation: {error}") from None
    entries = tuple(_entry(path, root, index, raw) for index, raw in enumerate(data["expectations"]))
    _check_overlaps(path, entries)
    return Expectations(data.get("implementation"), path, entries, data.get("description"), data.get("name"))


class _Refusal:
    """How one entry's checks refuse it: the file, the entry's line (or its key's) and what it names."""

    def __init__(self, path: Path, root: yaml.Node, index: int, raw: dict[str, Any]) -> None:
        self.path, self.root, self.index = path, root, index
        self.where: list[Any] = ["expectations", index]
        self.line = line_at(root, self.where)
        self.selectors = [key for key in SELECTORS if key in raw]
        self.named = " ".join(f"{key} {raw[key]}" for key in self.selectors) or "no case"

    def __call__(self, key: str | int | None, message: str) -> ExpectationsError:
        at = line_at(self.root, [*self.where, key]) if key is not None else self.line
        return ExpectationsError(self.path, at, f"expectations/{self.index} ({self.named}): {message}")

    def at(self, keys: list[Any], message: str) -> ExpectationsError:
        """A refusal at a nested key (`references`, 2), the message without the entry's name."""
        return ExpectationsError(self.path, line_at(self.root, [*self.where, *keys]), message)


def _entry(path: Path, root: yaml.Node, index: int, raw: dict[str, Any]) -> Expectation:
    refuse = _Refusal(path, root, index, raw)
    if len(refuse.selectors) != 1:
        raise refuse(
            None,
            "name exactly one of case (a case id), cases (a glob of case ids), rule (a rule id of "
            f"cases/rules.yaml) or tag; it names {', '.join(refuse.selectors) or 'none'}",
        )
    if ("fields" in raw) == ("error" in raw):
        raise refuse(
            None,
            "give `fields` (what differs: content, coreMemory, ...) or `error: true` (the "
            "implementation fails here; or text its error contains), one of the two",
        )
    if "cases" in raw and not any(char in raw["cases"] for char in "*?["):
        raise refuse("cases", f"cases: {raw['cases']!r} has no *, ? or [: write case: {raw['cases']} for one case")

    if not raw["reason"].strip():
        raise refuse(
            "reason",
            "reason is empty: say why the implementation differs here (what the difference "
            "is, and whose: upstream's, the profile's, the implementation's); if nobody knows "
            f"yet, write kind: {UNEXPLAINED} and what differs",
        )
    if "references" not in raw and "profiles" not in raw:
        raise refuse(
            None,
            "names neither references nor profiles: add `references: [pypi:0.34.12]` (what "
            "--reference names), `profiles: [letta-code@0.32.14]`, or `references: ['*']`",
        )
    _check_targets(raw, refuse)
    _check_fields(raw, refuse)
    expects = raw.get("error")
    return Expectation(
        case=raw.get("case", ""),
        fields=tuple(raw.get("fields", ())),
        kind=raw["kind"],
        reason=raw["reason"],
        references=tuple(raw.get("references", ())),
        profiles=tuple(raw.get("profiles", ())),
        link=raw.get("link"),
        line=refuse.line,
        cases=raw.get("cases"),
        rule=raw.get("rule"),
        tag=raw.get("tag"),
        error=None if expects is None else "" if expects is True else expects,
    )


def _check_targets(raw: dict[str, Any], refuse: _Refusal) -> None:
    """An entry's references and profiles: '*' alone, none twice, every reference a pinned release's spelling."""
    for key in ("references", "profiles"):
        names = raw.get(key, [])
        if ANY in names and len(names) > 1:
            raise refuse(key, f"{key}: '*' already names every one; write ['*'] alone")
        for position, text in enumerate(names):
            if names.index(text) != position:
                raise refuse(key, f"{key}: {text!r} is listed twice; keep one")
    labels: list[str] = []
    for position, text in enumerate(raw.get("references", [])):
        try:
            label = recorded_label(text)  # a release must be pinned: else the entry would never match
        except ValueError as error:
            raise refuse.at(["references", position], f"references: {error}") from None
        if label in labels:
            raise refuse(
                "references", f"references: {text!r} is the same reference as an earlier one ({label}); keep one"
            )
        labels.append(label)


def _check_fields(raw: dict[str, Any], refuse: _Refusal) -> None:
    """An entry's fields: '*' alone, none twice, each a record field or a lifecycle observation."""
    if ANY in raw.get("fields", []) and len(raw["fields"]) > 1:
        raise refuse("fields", "fields: '*' already means whatever differs; write ['*'] alone")
    for position, name in enumerate(raw.get("fields", [])):
        if name in record_fields() or name == ANY:
            continue
        near = difflib.get_close_matches(name, list(record_fields()), n=1, cutoff=0.75)
        if near or not _OBSERVATION.match(name):
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise refuse.at(
                ["fields", position],
                f"fields: {name!r} is neither a record field ({', '.join(record_fields())}) nor a lifecycle "
                f"observation (snake_case: ui_messages, system_has:FACT){hint}",
            )
        if raw["fields"].index(name) != position:
            raise refuse("fields", f"fields: {name!r} is listed twice; keep one")


def _check_overlaps(path: Path, entries: tuple[Expectation, ...]) -> None:
    """Two entries of one case may not both apply to one result: which reason would the verdict give?"""
    seen: dict[str, list[Expectation]] = {}
    for entry in entries:
        if entry.broad:
            continue  # a broad entry covers what a case's own entry does not (harness.verdict.judge)
        for earlier in seen.get(entry.case, []):
            reference, profile = _overlap(earlier.labels, entry.labels), _overlap(earlier.profiles, entry.profiles)
            if reference is None or profile is None:
                continue
            if (earlier.labels, earlier.profiles) == (entry.labels, entry.profiles):
                raise ExpectationsError(
                    path,
                    entry.line,
                    f"case {entry.case}: duplicate of the entry on line {earlier.line}; keep one (merge their fields)",
                )
            where = f"reference {reference}" + ("" if profile == ANY else f", profile {profile}")
            raise ExpectationsError(
                path,
                entry.line,
                f"case {entry.case}: overlaps the entry on line {earlier.line} (both apply to "
                f"{where}); merge them into one entry, or narrow their references or profiles",
            )
        seen.setdefault(entry.case, []).append(entry)


__all__ = [
    "ANY",
    "SELECTORS",
    "UNEXPLAINED",
    "Expectation",
    "Expectations",
    "ExpectationsError",
    "load_expectations",
    "reference_label",
    "reference_spelling",
]
