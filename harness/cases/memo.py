"""Loaded cases kept between runs: a scenario file the loader has read before, unchanged, is not parsed again.

Reading the corpus (strict YAML, the schema, every check of harness.cases.load) takes about two seconds for
450 files, most of a warm run's own time. `ScenarioMemo` keeps each loaded Scenario in one pickle file under
the cache (`scenarios/<fingerprint>.pickle`), keyed by the path as given and the sha256 of the file's bytes
and of its corpus's rules.yaml (a case's rules are checked against it). The fingerprint is the sha256 of the
loader's own code and schemas (harness/cases/, and what it reads: harness/core/, the only folder cases/ may
import (tests/test_layout.py), letta_profiles and the pinned manifest) and the Python version, so a changed
loader never reads what an older one stored. Only scenarios that loaded are kept: a file that fails is read
again each time, so its error is always the loader's own. The file is replaced atomically (several runs may
share the cache); one that cannot be read is treated as empty.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import letta_profiles
from harness.cases.rules import RULES_FILE, corpus_root
from harness.core.locations import reference_dir
from harness.core.model import Scenario

# What a loaded Scenario depends on besides its file: the loader's folder, core/ (the only folder cases/ imports),
# the profile names and the pinned manifest (a recorded reference must be pinned).
_FOLDERS = (Path(__file__).parent, Path(__file__).parents[1] / "core")
_DEPENDS = (Path(letta_profiles.__file__), reference_dir() / "manifest.json")


def fingerprinted_files() -> list[Path]:
    """Every file a loaded Scenario depends on besides its own, in a stable order."""
    code = sorted(p for folder in _FOLDERS for p in folder.iterdir() if p.suffix in (".py", ".json"))
    return [*code, *_DEPENDS]


def loader_fingerprint() -> str:
    """The sha256 of everything a loaded Scenario depends on besides its file: the loader's code and schemas."""
    digest = hashlib.sha256(sys.version.encode())
    for path in fingerprinted_files():
        content = path.read_bytes() if path.is_file() else b""
        digest.update(f"{path.parent.name}/{path.name}".encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


class ScenarioMemo:
    """Scenarios by (path, content): `load(path, loader)` gives the stored one or calls `loader(path)`; `save()`
    writes them back (an entry of a file that changed is replaced)."""

    def __init__(self, directory: Path) -> None:
        self.file = directory / f"{loader_fingerprint()[:32]}.pickle"
        self.stored: dict[tuple[str, str], Scenario] = {}
        self.used: dict[tuple[str, str], Scenario] = {}
        self._rules: dict[Path, bytes] = {}
        with contextlib.suppress(Exception):  # a missing, partial or foreign file is an empty memo
            with self.file.open("rb") as handle:
                stored = pickle.load(handle)
            if isinstance(stored, dict):
                self.stored = stored

    def _key(self, path: Path) -> tuple[str, str]:
        digest = hashlib.sha256(path.read_bytes())
        root = corpus_root(path)
        if root is not None:
            if root not in self._rules:
                rules = root / RULES_FILE
                self._rules[root] = rules.read_bytes() if rules.is_file() else b""
            digest.update(b"\0rules\0" + self._rules[root])
        return str(path), digest.hexdigest()

    def load(self, path: Path, loader: Callable[[Path], Scenario]) -> Scenario:
        try:
            key = self._key(path)
        except OSError:
            return loader(path)  # the loader says what is wrong with the file
        scenario = self.stored.get(key)
        if scenario is None:
            scenario = loader(path)
        self.used[key] = scenario
        return scenario

    def save(self) -> None:
        """Store what was loaded, with the entries of files this run did not read (another selection's)."""
        paths = {path for path, _ in self.used}
        kept = {key: scenario for key, scenario in self.stored.items() if key[0] not in paths}
        merged = {**kept, **self.used}
        if merged.keys() == self.stored.keys():
            return
        with contextlib.suppress(OSError):
            self.file.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(dir=self.file.parent, prefix=".scenarios-")
            try:
                with os.fdopen(handle, "wb") as out:
                    pickle.dump(merged, out, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(name, self.file)
                _prune(self.file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(name)
                raise


KEEP = 8  # memo files kept in the folder (one per loader version: worktrees, upgrades), most recently written first


def _prune(current: Path) -> None:
    """Remove all but the KEEP most recently written memo files beside `current`."""
    others = [p for p in current.parent.glob("*.pickle") if p != current]
    with contextlib.suppress(OSError):
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in others[KEEP - 1 :]:
            stale.unlink(missing_ok=True)
