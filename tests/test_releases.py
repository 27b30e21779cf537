"""harness.releases without the network: `npm pack` is faked (pytest-subprocess), the integrity check is real."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from harness.acquire import releases
from harness.acquire.npm_release import ensure as ensure_release
from harness.acquire.releases import ReferenceUnavailable, cache_damage, fetch_verified, sri_sha512
from harness.core.reference import ReferenceSpec

# The SRI value of zero bytes (sha512 of "" in base64), as npm and browsers print it.
SRI_OF_EMPTY = "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="


def tarball_bytes() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b'{"name": "fake", "version": "1.0.0"}\n'
        info = tarfile.TarInfo("package/package.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


TARBALL = tarball_bytes()
TARBALL_SRI = "sha512-" + base64.b64encode(hashlib.sha512(TARBALL).digest()).decode()


def fake_npm_pack(fp, data: bytes = TARBALL, returncode: int = 0, stderr: str = "") -> None:
    def write_tarball(process) -> None:
        dest = Path(process.args[process.args.index("--pack-destination") + 1])
        if returncode == 0:
            (dest / "fake-1.0.0.tgz").write_bytes(data)

    fp.register(["npm", "pack", fp.any()], callback=write_tarball, returncode=returncode, stderr=stderr)


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("0.32.18", "npm", "0.32.18"),
        ("npm:0.25.3", "npm", "0.25.3"),
        ("bundle:/x/letta.js", "bundle", "/x/letta.js"),
        ("checkout:../lc", "checkout", "../lc"),
    ],
)
def test_reference_spec_parse(text: str, kind: str, value: str) -> None:
    assert ReferenceSpec.parse(text) == ReferenceSpec(kind, value)


@pytest.mark.parametrize("text", ["svn:x", "npm:", "bundle:"])
def test_reference_spec_parse_rejects_unknown_forms(text: str) -> None:
    with pytest.raises(ValueError, match="npm:VERSION"):
        ReferenceSpec.parse(text)


def test_sri_sha512_is_npm_integrity_format(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert sri_sha512(empty) == SRI_OF_EMPTY


def test_fetch_verified_unpacks_a_matching_tarball_once(tmp_path: Path, fp) -> None:
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    assert fetch_verified("fake@1.0.0", TARBALL_SRI, dest) == dest
    assert (dest / "package" / "package.json").exists()
    assert (dest / ".verified").read_text().strip() == TARBALL_SRI
    assert fp.call_count(["npm", "pack", fp.any()]) == 1
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)  # verified already: npm is not run again
    assert fp.call_count(["npm", "pack", fp.any()]) == 1


def test_fetch_verified_refuses_a_tarball_with_other_bytes(tmp_path: Path, fp) -> None:
    fake_npm_pack(fp, data=TARBALL + b"tampered")
    dest = tmp_path / "fake"
    with pytest.raises(ReferenceUnavailable, match="integrity mismatch") as info:
        fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    assert TARBALL_SRI in str(info.value)
    assert not (dest / ".verified").exists()
    assert not (dest / "package").exists()


def test_fetch_verified_refetches_when_the_pin_changes(tmp_path: Path, fp) -> None:
    fake_npm_pack(fp)
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    dest.mkdir()
    (dest / ".verified").write_text(SRI_OF_EMPTY + "\n")  # verified against another pin
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    assert fp.call_count(["npm", "pack", fp.any()]) == 1


def test_npm_pack_failure_is_reported_with_its_stderr(tmp_path: Path, fp) -> None:
    fake_npm_pack(fp, returncode=1, stderr="npm ERR! 404 Not Found")
    with pytest.raises(ReferenceUnavailable, match="404 Not Found"):
        fetch_verified("fake@9.9.9", TARBALL_SRI, tmp_path / "fake")


def test_missing_npm_is_reported(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ReferenceUnavailable, match="npm is not on PATH"):
        fetch_verified("fake@1.0.0", TARBALL_SRI, tmp_path / "fake")


def test_an_unpinned_release_is_refused_before_any_download(fp) -> None:
    with pytest.raises(ReferenceUnavailable, match="not pinned") as info:
        ensure_release("0.0.1")
    assert "0.32.18" in str(info.value)
    assert fp.call_count(["npm", "pack", fp.any()]) == 0


# --- a damaged cache ---------------------------------------------------------------------------------


@pytest.fixture
def fresh_process_cache(monkeypatch) -> None:
    """Each test is a new process as far as the once-per-process cache check is concerned."""
    monkeypatch.setattr(releases, "_checked_this_process", set())


def test_a_truncated_cached_file_is_fetched_again(tmp_path: Path, fp, fresh_process_cache) -> None:
    fake_npm_pack(fp)
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    package_json = dest / "package" / "package.json"
    package_json.write_bytes(package_json.read_bytes()[:5])  # truncated after verification
    releases._checked_this_process.clear()  # a later run
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    assert fp.call_count(["npm", "pack", fp.any()]) == 2
    assert package_json.read_bytes() == b'{"name": "fake", "version": "1.0.0"}\n'


def test_a_same_size_corruption_is_found_by_its_digest(tmp_path: Path, fp, fresh_process_cache) -> None:
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    package_json = dest / "package" / "package.json"
    package_json.write_bytes(package_json.read_bytes().replace(b"fake", b"evil"))
    assert cache_damage(dest) == "package/package.json has other bytes than when verified"


def test_a_damaged_cache_that_cannot_be_fetched_again_says_both(tmp_path: Path, fp, fresh_process_cache) -> None:
    fake_npm_pack(fp)
    fake_npm_pack(fp, returncode=1, stderr="npm ERR! network down")
    dest = tmp_path / "fake"
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    (dest / "package" / "package.json").unlink()
    releases._checked_this_process.clear()
    with pytest.raises(ReferenceUnavailable) as info:
        fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    assert "damaged (package/package.json is missing)" in str(info.value)
    assert "network down" in str(info.value)
    assert not (dest / ".verified").exists()  # not trusted next time either


def test_a_half_done_extraction_is_not_used(tmp_path: Path, fp, fresh_process_cache) -> None:
    # Interrupted after unpacking into the staging directory, or after the rename but before the marker.
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    (tmp_path / "fake.partial" / "package").mkdir(parents=True)
    (dest / "package").mkdir(parents=True)
    (dest / "package" / "half.js").write_text("half")
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    assert fp.call_count(["npm", "pack", fp.any()]) == 1
    assert not (dest / "package" / "half.js").exists()
    assert not (tmp_path / "fake.partial").exists()


def test_a_cache_from_before_listings_gets_one_and_is_then_checked(tmp_path: Path, fp, fresh_process_cache) -> None:
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    (dest / releases.FILES_LISTING).unlink()  # as an older harness left it
    releases._checked_this_process.clear()
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    assert fp.call_count(["npm", "pack", fp.any()]) == 1  # trusted on first use...
    (dest / "package" / "package.json").write_text("{}")
    assert cache_damage(dest) is not None  # ...and checked from then on


def test_files_the_harness_adds_beside_the_bundle_are_not_damage(tmp_path: Path, fp, fresh_process_cache) -> None:
    fake_npm_pack(fp)
    dest = tmp_path / "fake"
    fetch_verified("fake@1.0.0", TARBALL_SRI, dest)
    (dest / "package" / ".conformance-driver-0123.mjs").write_text("derived")
    (dest / "package" / "node_modules").symlink_to(tmp_path)
    assert cache_damage(dest) is None


def _archive(tmp_path: Path, *members: tuple[str, str]) -> tarfile.TarFile:
    """A tar of ("file", name) and ("symlink", "name->target") members, opened for reading."""
    path = tmp_path / "archive.tar"
    with tarfile.open(path, "w") as archive:
        for kind, name in members:
            if kind == "file":
                info = tarfile.TarInfo(name)
                info.size = 2
                archive.addfile(info, io.BytesIO(b"ok"))
            else:
                info = tarfile.TarInfo(name.split("->")[0])
                info.type, info.linkname = tarfile.SYMTYPE, name.split("->")[1]
                archive.addfile(info)
    return tarfile.open(path)


@pytest.mark.parametrize("has_filter", [True, False], ids=["python-3.11.4+", "python-3.11.2-without-filter"])
def test_an_archive_unpacks_as_data_with_or_without_tarfile_s_filter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, has_filter: bool
) -> None:
    """Debian 12's Python 3.11.2 has no extractall(filter=): the README's first command crashed fetching bun."""
    if not has_filter:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    with _archive(tmp_path, ("file", "package/bin/bun"), ("symlink", "package/link->bin/bun")) as archive:
        releases.extract_data(archive, tmp_path / "out")
    assert (tmp_path / "out" / "package" / "link").read_bytes() == b"ok"


OUTSIDE = [("file", "../escaped"), ("file", "/abs/escaped"), ("symlink", "package/l->../../x")]


@pytest.mark.parametrize("member", OUTSIDE)
def test_a_member_outside_the_archive_is_refused_without_tarfile_s_filter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, member: tuple[str, str]
) -> None:
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    with _archive(tmp_path, member) as archive, pytest.raises(ReferenceUnavailable, match="outside the archive"):
        releases.extract_data(archive, tmp_path / "out")
    assert not (tmp_path / "escaped").exists()
