"""PyPI references without the network: wheels are built here, pip's download is replaced, the sha256
check and the unpacking are real (harness.acquire.pypi_release, harness.acquire.releases,
harness.tools.releases.pin)."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from harness.acquire import pypi_release, releases
from harness.acquire.releases import ReferenceUnavailable
from harness.core import reference
from harness.core.reference import ReferenceSpec
from harness.tools.releases import pin

NODE_BYTES = b"\x7fELF a node binary"


def make_wheel(where: Path, version: str, *, bundle: bool = True) -> Path:
    wheel = where / f"letta-{version}-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        if bundle:
            archive.writestr(pypi_release.APP + "letta.js", f"// letta {version}\n")
        archive.writestr(pypi_release.APP + "package.json", json.dumps({"version": version}))
        archive.writestr(pypi_release.PAYLOAD + "manifest.json", json.dumps({"version": version}))
        archive.writestr(pypi_release.NODE_MODULES + "ws/index.js", "module.exports = {}\n")
        archive.writestr(pypi_release.NODE_MEMBER, NODE_BYTES)
        archive.writestr("letta_code/__init__.py", "")
    return wheel


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Wheels 'published' by a fake index: download_wheel copies them; counts downloads."""
    published: dict[str, Path] = {}
    downloads: list[str] = []
    (tmp_path / "index").mkdir()

    def fake_download(version: str, dest: Path) -> Path:
        downloads.append(version)
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(published[version], dest))

    monkeypatch.setattr(pypi_release, "download_wheel", fake_download)
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(pypi_release, "_UNPACKED_THIS_PROCESS", set())
    published["downloads"] = downloads  # type: ignore[assignment]
    return published


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_verified_wheel_unpacks_the_bundle_with_its_node_modules_and_not_the_wheel(
    tmp_path: Path, index: dict
) -> None:
    index["1.0.0"] = make_wheel(tmp_path / "index", "1.0.0")
    bundle = pypi_release.ensure_unpacked("1.0.0", {"sha256": sha(index["1.0.0"])}, tmp_path / "cache")
    assert bundle.read_text() == "// letta 1.0.0\n"
    assert releases.bundle_version(bundle) == "1.0.0"
    assert (bundle.parent / "node_modules" / "ws" / "index.js").is_file()
    assert not (bundle.parent.parent / "bin").exists(), "the Node binary is shared, not unpacked per release"
    assert not list((tmp_path / "cache").rglob("*.whl")), "the wheel itself is not kept"


def test_a_wheel_with_other_bytes_is_refused_and_nothing_is_unpacked(tmp_path: Path, index: dict) -> None:
    index["1.0.0"] = make_wheel(tmp_path / "index", "1.0.0")
    with pytest.raises(pypi_release.WheelUnavailable, match=r"sha256 mismatch: pinned 00+, downloaded"):
        pypi_release.ensure_unpacked("1.0.0", {"sha256": "0" * 64}, tmp_path / "cache")
    assert not (tmp_path / "cache" / "pypi" / "1.0.0").exists()


def test_a_wheel_without_the_bundle_is_not_a_letta_code_wheel(tmp_path: Path, index: dict) -> None:
    index["1.0.0"] = make_wheel(tmp_path / "index", "1.0.0", bundle=False)
    with pytest.raises(pypi_release.WheelUnavailable, match=r"has no letta_code/_payload/app/letta\.js"):
        pypi_release.ensure_unpacked("1.0.0", {"sha256": sha(index["1.0.0"])}, tmp_path / "cache")


def test_every_release_links_one_shared_node_binary(tmp_path: Path, index: dict) -> None:
    cache = tmp_path / "cache"
    for version in ("1.0.0", "1.0.1"):
        index[version] = make_wheel(tmp_path / "index", version)
        bundle = pypi_release.ensure_unpacked(version, {"sha256": sha(index[version])}, cache)
        assert (bundle.parent / "node_modules" / "ws" / "index.js").is_file()
    binaries = list((cache / "node").glob("*/node"))
    assert len(binaries) == 1 and binaries[0].read_bytes() == NODE_BYTES
    assert binaries[0].parent.name == hashlib.sha256(NODE_BYTES).hexdigest()
    assert (cache / "pypi" / "1.0.0" / "node").resolve() == (cache / "pypi" / "1.0.1" / "node").resolve()


def test_a_damaged_cache_is_fetched_again_and_an_intact_one_is_not(tmp_path: Path, index: dict) -> None:
    index["1.0.0"] = make_wheel(tmp_path / "index", "1.0.0")
    pinned, cache = {"sha256": sha(index["1.0.0"])}, tmp_path / "cache"
    bundle = pypi_release.ensure_unpacked("1.0.0", pinned, cache)
    pypi_release.ensure_unpacked("1.0.0", pinned, cache)
    assert index["downloads"] == ["1.0.0"]
    bundle.write_text("// tampered\n")
    assert pypi_release.ensure_unpacked("1.0.0", pinned, cache).read_text() == "// letta 1.0.0\n"
    assert index["downloads"] == ["1.0.0", "1.0.0"]


def test_pip_download_is_asked_for_the_pinned_platform_without_dependencies(tmp_path: Path, fp) -> None:
    def leave_wheel(process) -> None:
        make_wheel(tmp_path, "1.2.3")

    fp.register([fp.any()], callback=leave_wheel)
    assert pypi_release.download_wheel("1.2.3", tmp_path).name.startswith("letta-1.2.3-")
    argv = [str(a) for a in fp.calls[0]]
    assert argv[1:4] == ["-m", "pip", "download"] and "--no-deps" in argv and "letta==1.2.3" in argv
    assert argv[argv.index("--platform") + 1] == "manylinux_2_28_x86_64"


def test_an_unpinned_pypi_version_names_the_pin_command(index: dict) -> None:
    with pytest.raises(ReferenceUnavailable, match=r"conformance pin pypi:9\.9\.9"):
        pypi_release.ensure("9.9.9")


@pytest.mark.parametrize(
    ("text", "kind", "label"),
    [
        ("0.32.18", "npm", "0.32.18"),  # on both registries: npm, what a bare version always meant
        ("0.34.12", "pypi", "pypi:0.34.12"),  # PyPI only
        ("pypi:0.32.18", "pypi", "pypi:0.32.18"),
        ("pypi:0.34.12@node", "pypi", "pypi:0.34.12@node"),
        ("7.7.7", "npm", "7.7.7"),  # pinned nowhere: npm, whose error lists the pinned versions
    ],
)
def test_a_bare_version_resolves_to_the_registry_that_pins_it(text: str, kind: str, label: str) -> None:
    spec = ReferenceSpec.parse(text)
    assert (spec.kind, spec.label) == (kind, label)


def test_every_pinned_artifact_in_release_order() -> None:
    labels = [spec.label for spec in reference.pinned_references()]
    assert len(labels) == 35
    assert labels.index("0.32.8") < labels.index("pypi:0.32.13") < labels.index("0.32.17")
    assert labels.index("0.32.18") + 1 == labels.index("pypi:0.32.18")
    assert labels[-1] == "pypi:0.34.12" == reference.default_reference()


def test_pin_writes_a_verified_pin_in_release_order_and_refuses_a_changed_digest(
    tmp_path: Path, index: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"releases": {}, "pypi": {"releases": {"0.2.0": {"sha256": "x"}}}}))
    index["0.1.0"] = make_wheel(tmp_path / "index", "0.1.0")
    entry = {"version": "0.1.0", "wheel": index["0.1.0"].name, "sha256": sha(index["0.1.0"])}
    monkeypatch.setattr(pypi_release, "index_entry", lambda version: entry)
    pinned = pin.pin_release("pypi:0.1.0", manifest)
    assert not pinned.already and "has no Python profile" in pinned.advice()[0]
    written = json.loads(manifest.read_text())["pypi"]["releases"]
    assert list(written) == ["0.1.0", "0.2.0"] and written["0.1.0"]["sha256"] == entry["sha256"]
    assert pin.pin_release("0.1.0", manifest).already
    index["0.1.0"].write_bytes(index["0.1.0"].read_bytes() + b"\0")  # the index now serves other bytes
    entry["sha256"] = sha(index["0.1.0"])
    before = manifest.read_text()
    with pytest.raises(ReferenceUnavailable, match=r"is pinned to .* but the registry now publishes"):
        pin.pin_release("pypi:0.1.0", manifest)
    assert manifest.read_text() == before
