"""A release's unpacked files are hashed again only where their stat moved since they last hashed right."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from harness.acquire import unpacked_check
from harness.acquire.unpacked_check import STAMPS, listing_damage


@pytest.fixture
def unpacked(tmp_path: Path) -> tuple[Path, dict[str, list]]:
    files = {"a.js": b"console.log(1)\n", "lib/b.js": b"export const b = 2;\n"}
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return tmp_path, {name: [len(data), hashlib.sha256(data).hexdigest()] for name, data in files.items()}


@pytest.fixture
def hashed(monkeypatch) -> list[str]:
    names: list[str] = []
    real = unpacked_check.sha256_of
    monkeypatch.setattr(unpacked_check, "sha256_of", lambda path: names.append(path.name) or real(path))
    return names


def test_a_settled_file_is_hashed_once_and_a_same_size_rewrite_is_still_found(unpacked, hashed, monkeypatch) -> None:
    dest, listing = unpacked
    monkeypatch.setattr(unpacked_check, "SETTLED_NS", 0)  # the files were written just now
    assert listing_damage(dest, listing) is None
    assert listing_damage(dest, listing) is None
    assert sorted(hashed) == ["a.js", "b.js"]  # the second check read no file
    time.sleep(0.05)  # past the file system's clock tick
    (dest / "a.js").write_bytes(b"console.log(2)\n")  # the same size: only the bytes tell
    assert listing_damage(dest, listing) == "a.js has other bytes than when verified"


def test_a_file_changed_within_the_last_second_is_not_remembered(unpacked, hashed) -> None:
    dest, listing = unpacked
    assert listing_damage(dest, listing) is None
    assert listing_damage(dest, listing) is None
    assert sorted(hashed) == ["a.js", "a.js", "b.js", "b.js"]
    assert not (dest / STAMPS).exists()


def test_missing_resized_and_unreadable_stamps_are_each_named(unpacked, monkeypatch) -> None:
    dest, listing = unpacked
    monkeypatch.setattr(unpacked_check, "SETTLED_NS", 0)
    (dest / STAMPS).write_text("not json")
    assert listing_damage(dest, listing) is None  # unreadable stamps: every file hashed, then stamped
    assert set(json.loads((dest / STAMPS).read_text())) == {"a.js", "lib/b.js"}
    (dest / "lib" / "b.js").write_bytes(b"short\n")
    assert listing_damage(dest, listing) == "lib/b.js is 6 bytes, 20 when verified"
    (dest / "lib" / "b.js").unlink()
    assert listing_damage(dest, listing) == "lib/b.js is missing"
