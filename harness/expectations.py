"""Expectations: an implementation's known failures, in a YAML file of its own outside the corpus.

Owns the expectations format (docs/expectations.md; harness/expectations.schema.json): reading it
strictly (the case loader's YAML rules, every refusal with file, line and fix), which recorded
divergences apply to one result (`Expectations.divergences_for`), the check of a file against the
loaded corpus (`Expectations.check_corpus`), and writing the format back
(`dump_expectations`, deterministic). Which result an entry's reference text matches, and which texts
are refused, is the rule a case's divergences follow too (harness.runners.manifest.recorded_label).
Turning a recorded divergence into known or stale is verdict.judge's.
"""

from __future__ import annotations

import difflib
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
from harness.model import Divergence, Scenario, ScenarioError, is_golden
from harness.runners.implementations import ImplSpec
from harness.runners.manifest import ReferenceSpec, recorded_label
from harness.versions import release_key

SCHEMA_FILE = "harness/expectations.schema.json"
ANY = "*"  # every reference, or every profile
UNEXPLAINED = "unexplained"  # the kind of an entry `conformance expectations update` wrote: nobody has said why yet
_OBSERVATION = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*(:.+)?$")  # a lifecycle observation: ui_messages, system_has:x


class ExpectationsError(ScenarioError):
    """An expectations file, or one of its entries, that cannot be used; names the file, the line and the fix."""


@functools.cache
def _schema() -> dict[str, Any]:
    return json.loads(resources.files("harness").joinpath("expectations.schema.json").read_text(encoding="utf-8"))


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


@dataclass(frozen=True)
class Expectation:
    """One entry: `case` differs from `references` (labels; empty: any) under `profiles` (empty: any) in `fields`."""

    case: str
    fields: tuple[str, ...]
    kind: str
    reason: str
    references: tuple[str, ...] = ()  # as written
    profiles: tuple[str, ...] = ()
    link: str | None = None
    line: int = 0
    labels: tuple[str, ...] = field(init=False, compare=False)  # the result labels `references` names (`*`: any)

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(reference_label(text) for text in self.references))

    def applies(self, label: str, profile: str) -> bool:
        return _names(self.labels, label) and _names(self.profiles, profile)

    def divergence(self) -> Divergence:
        """As the verdict reads it (harness.verdict.judge.divergence_verdict); a profile-only entry names `*`."""
        return Divergence(self.labels or (ANY,), self.fields, self.kind, self.reason, self.link)


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
    """A loaded expectations file: the implementation it is for, and its entries in file order."""

    implementation: str
    path: Path
    entries: tuple[Expectation, ...]
    description: str | None = None
    _by_case: dict[str, list[Expectation]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_case: dict[str, list[Expectation]] = {}
        for entry in self.entries:
            by_case.setdefault(entry.case, []).append(entry)
        object.__setattr__(self, "_by_case", by_case)

    def divergences_for(self, case_id: str, reference_label: str, profile: str) -> tuple[Divergence, ...]:
        """The recorded divergences of one result: the case's entries that apply to its reference label and
        profile (at most one: the loader refuses entries that overlap)."""
        return tuple(e.divergence() for e in self._by_case.get(case_id, ()) if e.applies(reference_label, profile))

    def check_corpus(self, scenarios: Iterable[Scenario]) -> list[ExpectationsError]:
        """Entries the loaded corpus contradicts: a case it does not have (removed or renamed: a stale entry),
        or, for a compile case, a field no record has. Pass every case loaded, not a -k selection of them."""
        known = {scenario.id: scenario for scenario in scenarios}
        problems = []
        for entry in self.entries:
            scenario = known.get(entry.case)
            if scenario is None:
                near = difflib.get_close_matches(entry.case, sorted(known), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(self._error(entry, f"case {entry.case!r} is not in the corpus: it was removed or "
                                                   f"renamed, so the entry is stale; remove it{hint}"))  # fmt: skip
                continue
            if scenario.kind == "compile":
                for name in entry.fields:
                    if name not in record_fields():
                        problems.append(self._error(entry, f"case {entry.case!r} is a compile case and its records "
                                                           f"have no field {name!r}{_field_hint(name)}"))  # fmt: skip
        return problems

    def _error(self, entry: Expectation, message: str) -> ExpectationsError:
        return ExpectationsError(self.path, entry.line or None, message)


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
    try:
        ImplSpec.parse(data["implementation"])
    except ValueError as error:
        raise ExpectationsError(path, line_at(root, ["implementation"]), f"implementation: {error}") from None
    entries = tuple(_entry(path, root, index, raw) for index, raw in enumerate(data["expectations"]))
    _check_overlaps(path, entries)
    return Expectations(data["implementation"], path, entries, data.get("description"))


def _entry(path: Path, root: yaml.Node, index: int, raw: dict[str, Any]) -> Expectation:
    where: list[Any] = ["expectations", index]
    line = line_at(root, where)

    def refuse(key: str | int | None, message: str) -> ExpectationsError:
        at = line_at(root, [*where, key]) if key is not None else line
        return ExpectationsError(path, at, f"expectations/{index} (case {raw['case']}): {message}")

    if not raw["reason"].strip():
        raise refuse("reason", "reason is empty: say why the implementation differs here (what the difference "
                               "is, and whose: upstream's, the profile's, the implementation's); if nobody knows "
                               f"yet, write kind: {UNEXPLAINED} and what differs")  # fmt: skip
    if "references" not in raw and "profiles" not in raw:
        raise refuse(None, "names neither references nor profiles: add `references: [pypi:0.34.12]` (what "
                           "--reference names), `profiles: [letta-code@0.32.14]`, or `references: ['*']`")  # fmt: skip
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
            raise ExpectationsError(
                path, line_at(root, [*where, "references", position]), f"references: {error}"
            ) from None
        if label in labels:
            raise refuse(
                "references", f"references: {text!r} is the same reference as an earlier one ({label}); keep one"
            )
        labels.append(label)
    for position, name in enumerate(raw["fields"]):
        if name in record_fields():
            continue
        near = difflib.get_close_matches(name, list(record_fields()), n=1, cutoff=0.75)
        if near or not _OBSERVATION.match(name):
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ExpectationsError(
                path, line_at(root, [*where, "fields", position]),
                f"fields: {name!r} is neither a record field ({', '.join(record_fields())}) nor a lifecycle "
                f"observation (snake_case: ui_messages, system_has:FACT){hint}",
            )  # fmt: skip
        if raw["fields"].index(name) != position:
            raise refuse("fields", f"fields: {name!r} is listed twice; keep one")
    return Expectation(
        case=raw["case"], fields=tuple(raw["fields"]), kind=raw["kind"], reason=raw["reason"],
        references=tuple(raw.get("references", ())), profiles=tuple(raw.get("profiles", ())),
        link=raw.get("link"), line=line,
    )  # fmt: skip


def _check_overlaps(path: Path, entries: tuple[Expectation, ...]) -> None:
    """Two entries of one case may not both apply to one result: which reason would the verdict give?"""
    seen: dict[str, list[Expectation]] = {}
    for entry in entries:
        for earlier in seen.get(entry.case, []):
            reference, profile = _overlap(earlier.labels, entry.labels), _overlap(earlier.profiles, entry.profiles)
            if reference is None or profile is None:
                continue
            if (earlier.labels, earlier.profiles) == (entry.labels, entry.profiles):
                raise ExpectationsError(path, entry.line, f"case {entry.case}: duplicate of the entry on line "
                                                          f"{earlier.line}; keep one (merge their fields)")  # fmt: skip
            where = f"reference {reference}" + ("" if profile == ANY else f", profile {profile}")
            raise ExpectationsError(
                path, entry.line, f"case {entry.case}: overlaps the entry on line {earlier.line} (both apply to "
                f"{where}); merge them into one entry, or narrow their references or profiles"
            )  # fmt: skip
        seen.setdefault(entry.case, []).append(entry)


# --- writing ------------------------------------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:/+-]*$")


def _scalar(text: str, quote: bool = False) -> str:
    """A YAML scalar that reads back as `text`: plain where that is safe, else double-quoted with escapes."""
    if not quote and _PLAIN.match(text) and not text.endswith(":") and yaml.safe_load(text) == text:
        return text
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= code < 0x7F or (code > 0xA0 and code not in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
                                     and not 0xD800 <= code < 0xE000):  # fmt: skip
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02X}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def _flow(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(_scalar(item) for item in items) + "]"


def entry_key(entry: Expectation) -> tuple[Any, ...]:
    """The order entries are written in: by case, then by reference (release order) and profile."""
    return (entry.case, [release_key(label) for label in entry.labels], entry.profiles, entry.fields)


def dump_expectations(implementation: str, entries: Iterable[Expectation], description: str | None = None) -> str:
    """The file's text: entries sorted (entry_key), keys in one order, values quoted only where needed."""
    lines = [f"implementation: {_scalar(implementation)}"]
    if description is not None:
        lines.append(f"description: {_scalar(description, quote=True)}")
    ordered = sorted(entries, key=entry_key)
    lines.append("expectations:" + ("" if ordered else " []"))
    for entry in ordered:
        lines.append(f"  - case: {_scalar(entry.case)}")
        if entry.references:
            lines.append(f"    references: {_flow(entry.references)}")
        if entry.profiles:
            lines.append(f"    profiles: {_flow(entry.profiles)}")
        lines.append(f"    fields: {_flow(entry.fields)}")
        lines.append(f"    kind: {_scalar(entry.kind)}")
        lines.append(f"    reason: {_scalar(entry.reason, quote=True)}")
        if entry.link is not None:
            lines.append(f"    link: {_scalar(entry.link)}")
    return "\n".join(lines) + "\n"


__all__ = ["ANY", "UNEXPLAINED", "Expectation", "Expectations", "ExpectationsError", "dump_expectations",
           "load_expectations", "reference_label", "reference_spelling"]  # fmt: skip
