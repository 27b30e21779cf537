"""Writing scenarios: a repository model (trees of exact bytes per commit) to a case file and back.

`add-case`, `reduce` and `fuzz` all produce cases through this module. Every name and file is
written in the most readable form that reproduces its bytes exactly (plain text, `bom`,
`newlines: crlf`, a double-quoted string with escapes, or base64 as the last resort), and each
choice is checked by re-reading it, so a written case always rebuilds the same trees.
"""

from __future__ import annotations

import base64
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from harness.cases.load import DEFAULT_INPUTS
from harness.cases.tags import TAGS
from harness.core.model import FoundBy
from harness.core.repomodel import MODE_EXEC, MODE_GITLINK, MODE_LINK, Blob, RepoModel, RepoShape
from harness.core.repospec import file_bytes

# --- YAML text that reads back as the same string ---------------------------------------------------


class CaseDumper(yaml.SafeDumper):
    """Block literals for multi-line text where YAML allows them; PyYAML falls back to quoting. A value met twice
    is written out twice: the loader refuses YAML aliases (`&id001`/`*id001`), which PyYAML writes for them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class QuotedStr(str):
    """A string always written double-quoted (names: escapes stay visible, `"\\n"` not a line break)."""


_BLOCK_UNSAFE = frozenset("\r\x85\u2028\u2029\ufeff")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if isinstance(value, QuotedStr) or any(
        ch in _BLOCK_UNSAFE or not (ch.isprintable() or ch in "\n\t") for ch in value
    ):
        style = '"'  # YAML folds these line ends inside block scalars; escapes keep them exact
    elif "\n" in value:
        style = "|"  # PyYAML falls back to quoting when a literal block cannot hold the text
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)


CaseDumper.add_representer(str, _represent_str)
CaseDumper.add_representer(QuotedStr, _represent_str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=CaseDumper, allow_unicode=True, sort_keys=False, width=100, default_flow_style=False)


def yaml_keeps(value: str) -> bool:
    """Whether `value` written by dump_yaml reads back unchanged (line ends inside block scalars may not)."""
    try:
        read_back: object = yaml.safe_load(dump_yaml({"v": value}))
        return read_back == {"v": value}
    except yaml.YAMLError:
        return False


def _text_name(name: bytes) -> str | None:
    """The name as text when it is UTF-8 that YAML keeps; None means path_base64."""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if yaml_keeps(text) else None


def _plain_name(text: str) -> bool:
    """A name readable as a mapping key: printable, no line or format characters."""
    return all(ch.isprintable() or ch == " " for ch in text)


def encode_content(blob: Blob) -> str | dict[str, Any]:
    """The most readable content form whose bytes (file_bytes) are exactly blob's."""
    for candidate in _content_forms(blob):
        if file_bytes(candidate) == blob and all(yaml_keeps(v) for v in _strings(candidate)):
            return candidate
    raise AssertionError("base64 always round-trips")  # pragma: no cover


def _strings(form: str | dict[str, Any]) -> list[str]:
    return [form] if isinstance(form, str) else [v for v in form.values() if isinstance(v, str)]


def _content_forms(blob: Blob) -> list[str | dict[str, Any]]:
    b64 = base64.b64encode(blob.data).decode("ascii")
    if blob.mode == MODE_GITLINK:
        target = blob.data.decode("ascii")
        return [{"gitlink": int(target[len("commit:") :]) if target.startswith("commit:") else target}]
    if blob.mode == MODE_LINK:
        try:
            return [{"symlink": blob.data.decode("utf-8")}, {"symlink_base64": b64}]
        except UnicodeDecodeError:
            return [{"symlink_base64": b64}]
    extra = {"executable": True} if blob.mode == MODE_EXEC else {}
    forms: list[str | dict[str, Any]] = []
    try:
        text = blob.data.decode("utf-8")
    except UnicodeDecodeError:
        return [{"base64": b64, **extra}]
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    flags: dict[str, Any] = {"bom": True} if bom else {}
    if "\r\n" in body and "\r" not in body.replace("\r\n", "") and "\n" not in body.replace("\r\n", ""):
        forms.append({"text": body.replace("\r\n", "\n"), **flags, "newlines": "crlf", **extra})
    elif "\r" in body and "\n" not in body:
        forms.append({"text": body.replace("\r", "\n"), **flags, "newlines": "cr", **extra})
    if not bom and not extra:
        forms.append(text)
    forms.append({"text": body, **flags, **extra})
    forms.append({"base64": b64, **extra})
    return forms


def encode_files(files: dict[bytes, Blob]) -> dict[str, Any] | list[dict[str, Any]]:
    """A commit's `files`: a mapping when every name is plain text, else the list form."""
    names = {name: _text_name(name) for name in files}
    ordered = sorted(files)
    if all(text is not None and _plain_name(text) for text in names.values()):
        return {names[name]: encode_content(files[name]) for name in ordered}  # type: ignore[misc]
    entries = []
    for name in ordered:
        text = names[name]
        key = {"path": QuotedStr(text)} if text is not None else {"path_base64": base64.b64encode(name).decode("ascii")}
        entries.append({**key, "content": encode_content(files[name])})
    return entries


def encode_path(name: bytes) -> str | dict[str, str]:
    text = _text_name(name)
    return text if text is not None else {"path_base64": base64.b64encode(name).decode("ascii")}


def repo_spec(model: RepoModel) -> dict[str, Any]:
    """The scenario's `repo` mapping: each commit lists what it deletes and what it adds or changes."""
    spec: dict[str, Any] = {}
    if model.kind != "git":
        spec["kind"] = model.kind
        if model.kind in ("no-git", "unborn") and model.head:
            spec["commits"] = [{"files": encode_files(model.head)}]
    else:
        commits = []
        previous: dict[bytes, Blob] = {}
        for index, commit in enumerate(model.commits):
            entry: dict[str, Any] = {}
            if commit.message is not None:
                entry["message"] = commit.message
            for key in ("author", "committer"):
                if getattr(commit, key) is not None:
                    entry[key] = getattr(commit, key)
            if commit.parents is not None:  # a merge or a root: its changes are over its first parent's tree
                entry["parents"] = [position + 1 for position in commit.parents]
                previous = model.commits[commit.parents[0]].files if commit.parents else {}
            gone = sorted(name for name in previous if name not in commit.files)
            if gone:
                entry["delete"] = [encode_path(name) for name in gone]
            changed = {name: blob for name, blob in commit.files.items() if previous.get(name) != blob}
            if changed:
                entry["files"] = encode_files(changed)
            if not entry:
                entry["message"] = f"commit {index + 1}"
            commits.append(entry)
            previous = commit.files
        spec["commits"] = commits
    if model.memory_subdir:
        spec["memory_subdir"] = model.memory_subdir
    noise = model.worktree
    if noise:
        worktree: dict[str, Any] = {}
        if noise.files:
            worktree["files"] = encode_files(noise.files)
        if noise.delete:
            worktree["delete"] = [encode_path(name) for name in noise.delete]
        if noise.stage:
            staged = noise.stage
            worktree["stage"] = [encode_path(name) for name in staged] if isinstance(staged, tuple) else True
        spec["worktree"] = worktree
    if model.in_progress is not None:
        started = model.in_progress
        spec["in_progress"] = {"kind": started.kind, "commit": started.commit}
        if started.kind == "rebase" and started.backend != "merge":
            spec["in_progress"]["backend"] = started.backend
    spec.update(shape_spec(model.shape))
    return spec


def shape_spec(shape: RepoShape) -> dict[str, Any]:
    """The shape fields that differ from the default (a listing's padding is written out as files)."""
    default = RepoShape()
    spec: dict[str, Any] = {}
    for key in ("layout", "object_format", "head"):
        if getattr(shape, key) != getattr(default, key):
            spec[key] = getattr(shape, key)
    if shape.config:
        spec["config"] = dict(shape.config)
    if shape.missing_objects:
        spec["missing_objects"] = list(shape.missing_objects)
    return spec


def case_document(
    case_id: str,
    description: str,
    model: RepoModel,
    *,
    pins: str = "",
    tags: list[str] | None = None,
    inputs: dict[str, Any] | None = None,
    found_by: FoundBy | None = None,
    profiles: tuple[str, ...] = (),
    rules: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A whole scenario mapping; inputs equal to the defaults are left out. Tags must be in cases.tags
    (ValueError otherwise), so that what is written loads. `found_by`: the reference, profile (and seed,
    implementation) `conformance fuzz` or `reduce` saw it diverge with; `profiles`: the only ones it runs under;
    `rules`: the ids of cases/rules.yaml it exercises (the caller checks them: harness.cases.rules)."""
    unknown = [tag for tag in tags or () if tag not in TAGS]
    if unknown:
        raise ValueError(f"unknown tag(s) {', '.join(unknown)}: use tags from harness/cases/tags.py")
    doc: dict[str, Any] = {"id": case_id, "description": description}
    if pins:
        doc["pins"] = pins
    if tags:
        doc["tags"] = list(dict.fromkeys(tags))
    if rules:
        doc["rules"] = list(dict.fromkeys(rules))
    if profiles:
        doc["profiles"] = list(profiles)
    if found_by:
        doc["found_by"] = found_by_spec(found_by)
    # An input without a default (client_skills) is kept whatever its value: `null` and `[]` are inputs too.
    changed_inputs = {k: v for k, v in (inputs or {}).items() if k not in DEFAULT_INPUTS or DEFAULT_INPUTS[k] != v}
    if changed_inputs:
        doc["inputs"] = changed_inputs
    doc["repo"] = repo_spec(model)
    return doc


def found_by_spec(found_by: FoundBy) -> dict[str, Any]:
    """A case's `found_by` mapping: the keys that have a value."""
    return {key: value for key, value in asdict(found_by).items() if value is not None}


class CaseExists(Exception):
    pass


def write_case(doc: dict[str, Any], out_dir: Path, *, overwrite: bool = False) -> Path:
    """Write `<out_dir>/<id>.yaml`; refuses to replace an existing case unless told to."""
    path = out_dir / f"{doc['id']}.yaml"
    if path.exists() and not overwrite:
        raise CaseExists(f"{path} already exists; choose another --id (or remove the file)")
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_yaml(doc), encoding="utf-8")
    return path


def model_size(model: RepoModel) -> tuple[int, int, int]:
    """(files at HEAD, bytes at HEAD, commits), for shrink reports."""
    return len(model.head), sum(len(b.data) for b in model.head.values()), len(model.commits)
