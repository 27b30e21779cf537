"""How report.json stores its results, and reading them back: the one owner of the file's layout.

A full-matrix report holds hundreds of cases times 35 references, nearly all passing, so schema
`letta-conformance/report/3` writes each thing once:

- `cases`: per case id, what comes from the scenario (`tags`, `path`, `description`, `pins`) and the
  compile `request`; a result repeats one of them only where its own value differs.
- `outputs`: sha256 -> value for every record value of SHARED_CHARS characters or more that is worth
  keeping; a record names it as `{"$output": sha256}`. Kept: every value of a result that did not pass and
  that the report shows in full (report.explained.shown_in_full: the representative of each rule and cause;
  the other failing results keep their diffs, with the bytes around each first difference, and name their
  values by digest, so the file grows with distinct differences, not with failing cases), every value of a
  field whose values differ between the reference outcomes of one case (what drift compares), and a value
  under ADDED_CHARS of a field some of the case's records lack (drift names an added field by it).
  A value all results of its case agree on, in results that passed, is named by digest only: there is
  nothing to compare it with, and the case rebuilds it.
- A passing result leaves out what follows from the rest: empty `reasons`, `diffs`, `structured_diff`,
  `turns`; `compared_fields` equal to the keys of `field_comparison`; `reproduce`; a `reference_outcome`,
  `field_comparison`, `compared_fields` or `turns` equal to that of the case's previous result in the file
  (`{"same_as": "previous"}`: most references compile a case to the same bytes), a port outcome equal to the reference's
  (`{"same_as": "reference_outcome"}`) and, in a lifecycle turn, a reference side equal to the port's
  (`{"same_as": "impl"}`).

`full_entries` undoes all of it, reading the results in file order (and reads schema 1 too), so every
reader sees one entry per result with every field of docs/report-format.md; `result_from_json`
(report.write) turns such an entry into a result.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from harness.core.model import DEFAULT_IMPLEMENTATION, Status

SCHEMA = "letta-conformance/report/3"
READABLE = (SCHEMA,)  # report/2 and older named the side under test `port`: rerun to compare with them
CASE_FIELDS = ("tags", "path", "description", "pins", "rules", "request")
SHARED_CHARS = 200  # a record value this long or longer is named by digest
ADDED_CHARS = 16_000  # a value some of its case's records lack is kept up to this length (drift: "added")
OUTPUT = "$output"
SAME = {"same_as": "reference_outcome"}
SAME_TURN = {"same_as": "impl"}
PREVIOUS = {"same_as": "previous"}  # in a passing result: the value of the case's previous result in the file
INHERITED = ("reference_outcome", "field_comparison", "compared_fields", "turns")  # the keys PREVIOUS stands in
_EMPTY_WHEN_PASSING = {"reasons": [], "diffs": [], "structured_diff": "", "turns": []}
_SIDES = ("reference_outcome", "impl_outcome")


class ReportError(Exception):
    """A file that is not a readable report.json; the message names the file and what is wrong."""


def read_report(path: Path) -> tuple[Path, dict[str, Any]]:
    """report.json (or the directory holding it), checked to be a report this version can read."""
    file = path / "report.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise ReportError(
            f"{file}: cannot read it ({error.strerror}); give a report directory or report.json"
        ) from None
    except ValueError as error:
        raise ReportError(f"{file}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("schema") not in READABLE:
        got = data.get("schema") if isinstance(data, dict) else None
        note = " (written by an older letta-conformance: run it again)" if str(got).startswith("letta-") else ""
        raise ReportError(f"{file}: schema {got!r}, expected {SCHEMA!r} (a report.json from `conformance run`){note}")
    return file, data


_TABLES = ("cases", "results", "outputs")  # written one entry a line
_ROWS = ("summary",)  # written indented, but each mapping of plain values (a row of counts) on one line


def _one(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=repr)


def _rows(value: Any, depth: int) -> str:
    if not isinstance(value, dict) or not any(isinstance(v, (dict, list)) for v in value.values()):
        return _one(value)
    items = [f"{' ' * (depth + 1)}{_one(k)}: {_rows(v, depth + 1)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"


def dumps(data: dict[str, Any]) -> str:
    """report.json's text: ASCII, one-space indent, but one line per entry of `cases`, `results` and `outputs`
    (a full matrix is 35 times its corpus: indenting every field of every result would triple the file), and
    one line per row of counts in `summary`."""
    one = _one
    parts = []
    for key, value in data.items():
        if key in _ROWS:
            text = _rows(value, 1)
        elif key in _TABLES and value:
            rows = value.items() if isinstance(value, dict) else None
            lines = [f"  {one(k)}: {one(v)}" for k, v in rows] if rows is not None else [f"  {one(v)}" for v in value]
            text = ("{\n" if rows is not None else "[\n") + ",\n".join(lines) + ("\n }" if rows is not None else "\n ]")
        else:
            text = json.dumps(value, indent=1, ensure_ascii=True, default=repr).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


@functools.lru_cache(maxsize=8192)  # a matrix names each long value once per release that gave it
def digest(value: str) -> str:
    """The sha256 that names a long value in `outputs`."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _records(entry: dict[str, Any]) -> list[dict[str, Any]]:
    sides = [entry.get("reference_outcome")]  # drift compares references; an implementation's own values are
    # kept with its failing result, or equal the reference's
    return [side["record"] for side in sides if isinstance(side, dict) and isinstance(side.get("record"), dict)]


def _varying(entries: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(case, field) pairs whose long values are worth keeping though every result passed: the case's records
    hold more than one value of the field, or (up to ADDED_CHARS) one value that some records lack (0.25.x has
    no coreMemory: drift then names the added field's first bytes)."""
    records: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        records.setdefault(entry["case"], []).extend(_records(entry))
    varying = set()
    for case_id, found in records.items():
        for key in {key for record in found for key in record}:
            values = {_comparable(record[key]) for record in found if key in record}
            lacking = any(key not in record for record in found)
            short = all(len(value) < ADDED_CHARS for value in values if isinstance(value, str))
            if len(values) > 1 or (lacking and short):
                varying.add((case_id, key))
    return varying


def _comparable(value: Any) -> Any:
    return value if isinstance(value, str) else ("json", json.dumps(value, sort_keys=True, default=repr))


def _intern(entry: dict[str, Any], outputs: dict[str, str], varying: set[tuple[str, str]], keep_all: bool) -> None:
    """Each long record value replaced by its digest, and kept in `outputs` when worth keeping (module doc)."""
    for side in _SIDES:
        outcome = entry.get(side)
        if not outcome or not isinstance(outcome.get("record"), dict):
            continue
        record = dict(outcome["record"])
        for key, value in record.items():
            if isinstance(value, str) and len(value) >= SHARED_CHARS:
                name = digest(value)
                if keep_all or (entry["case"], key) in varying:
                    outputs[name] = value
                record[key] = {OUTPUT: name}
        entry[side] = {**outcome, "record": record}


def _compact_passing(entry: dict[str, Any]) -> None:
    entry.pop("reproduce", None)  # its commands follow from the entry
    for key, empty in _EMPTY_WHEN_PASSING.items():
        if key in entry and entry[key] == empty:
            del entry[key]
    if entry.get("compared_fields") == list(entry.get("field_comparison", {})):
        del entry["compared_fields"]
    if entry.get("impl_outcome") is not None and entry["impl_outcome"] == entry.get("reference_outcome"):
        entry["impl_outcome"] = dict(SAME)
    if entry.get("turns"):
        entry["turns"] = [
            {**t, "reference": dict(SAME_TURN)} if t.get("reference") and t["reference"] == t.get("impl") else t
            for t in entry["turns"]
        ]


def store(entries: list[dict[str, Any]], keep: set[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """Full entries (result_json, in report order) as report.json stores them: `cases`, `results`, `outputs`.
    `keep`: the (implementation, case, reference) of the results that did not pass whose long values are kept
    (None: all of them)."""
    varying = _varying(entries)
    previous: dict[str, dict[str, Any]] = {}  # case id -> the INHERITED values of its last result so far, as stored
    cases: dict[str, dict[str, Any]] = {}
    outputs: dict[str, str] = {}
    results = []
    for full in entries:
        entry = dict(full)
        shared = cases.setdefault(entry["case"], {k: entry[k] for k in CASE_FIELDS if k in entry})
        for key in CASE_FIELDS:
            if key in entry and entry[key] == shared.get(key):
                del entry[key]
        passed = entry["status"] == Status.PASS
        where = (entry.get("implementation", DEFAULT_IMPLEMENTATION), entry["case"], entry["reference"])
        _intern(entry, outputs, varying, not passed and (keep is None or where in keep))
        if passed:
            _compact_passing(entry)
        current, before = {k: entry[k] for k in INHERITED if k in entry}, previous.get(entry["case"], {})
        for key, value in current.items():
            if passed and value is not None and key in before and before[key] == value:
                entry[key] = dict(PREVIOUS)
        previous[entry["case"]] = current
        results.append(entry)
    return {"cases": dict(sorted(cases.items())), "results": results, "outputs": dict(sorted(outputs.items()))}


def expanded(entry: dict[str, Any], outputs: dict[str, str]) -> dict[str, Any]:
    """The entry with every `{"$output": digest}` that `outputs` holds replaced by its value again (a digest
    it does not hold stays: written again, it gives the same entry)."""
    entry = dict(entry)
    for side in _SIDES:
        outcome = entry.get(side)
        if not outcome or not isinstance(outcome.get("record"), dict):
            continue
        record = {
            k: outputs[v[OUTPUT]] if isinstance(v, dict) and set(v) == {OUTPUT} and v[OUTPUT] in outputs else v
            for k, v in outcome["record"].items()
        }
        entry[side] = {**outcome, "record": record}
    return entry


def full_entry(entry: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """One stored result with its case's fields and everything a passing result leaves out put back (its long
    values stay digests: `expanded` looks them up)."""
    full = {**{k: case[k] for k in CASE_FIELDS if k in case}, **entry}
    full.setdefault("implementation", DEFAULT_IMPLEMENTATION)  # a report from before --impl: the Python port
    for key, empty in _EMPTY_WHEN_PASSING.items():
        full.setdefault(key, type(empty)())
    if "compared_fields" not in full:
        full["compared_fields"] = list(full.get("field_comparison", {}))
    if full.get("impl_outcome") == SAME:
        full["impl_outcome"] = full["reference_outcome"]
    full["turns"] = [{**t, "reference": t["impl"]} if t.get("reference") == SAME_TURN else t for t in full["turns"]]
    return full


def full_entries(data: dict[str, Any], *, expand: bool = False) -> list[dict[str, Any]]:
    """Every result of a report.json (schema 1 or 2) with every field, in file order; `expand` also puts
    the long values kept in `outputs` back in the records."""
    cases = data.get("cases") or {}
    outputs = data.get("outputs") or {}
    previous: dict[str, dict[str, Any]] = {}
    entries = []
    for stored in data.get("results", []):
        before = previous.get(stored["case"], {})
        current = {k: before[k] if stored[k] == PREVIOUS else stored[k] for k in INHERITED if k in stored}
        previous[stored["case"]] = current
        stored = {**stored, **current}
        entries.append(full_entry(stored, cases.get(stored["case"], {})))
    return [expanded(entry, outputs) for entry in entries] if expand else entries
