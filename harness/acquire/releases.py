"""Getting references onto the machine: pinned letta-code releases, bun and node.

A release is fetched by its registry's fetcher module (harness.core.registries names it: npm_release,
pypi_release), which verifies it against its pin in reference/manifest.json and unpacks it once into a
cache outside the repository ($LETTA_CONFORMANCE_CACHE, default ~/.cache/letta-conformance). Here: what
they share (the cache, a tarball fetched with `npm pack` and checked against its sha512 integrity, the
cache checks), bun and node, and the dispatch from a spec to its letta.js. A bundle path is a reference
too; an upstream revision or checkout is built from source by harness.acquire.revision_build instead.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol, cast

from harness.acquire.unpacked_check import listing_damage, listing_of
from harness.core.child import run_group
from harness.core.reference import ReferenceSpec
from harness.core.registries import load_manifest, registry

FETCH_LOCK = threading.RLock()  # parallel workers starting their references fetch each package once


class ReferenceUnavailable(Exception):
    """A reference that cannot be set up; the message says why and what to do."""


def cache_root() -> Path:
    configured = os.environ.get("LETTA_CONFORMANCE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "letta-conformance"


def sri_sha512(data_path: Path) -> str:
    digest = hashlib.sha512()
    with data_path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode("ascii")


def run_npm(args: list[str], timeout: float, why: str) -> subprocess.CompletedProcess[str]:
    """`npm ARGS`; a missing npm or a failure is ReferenceUnavailable naming the command (`why`: what needs npm)."""
    try:
        done = run_group(["npm", *args], timeout)
    except FileNotFoundError:
        raise ReferenceUnavailable(f"npm is not on PATH; {why}") from None
    if done.returncode != 0:
        raise ReferenceUnavailable(f"npm {' '.join(args[:2])} failed: {done.stderr.strip()[-800:]}")
    return done


def npm_pack(spec: str, dest: Path) -> Path:
    """Download one package tarball from the npm registry (no install scripts run)."""
    dest.mkdir(parents=True, exist_ok=True)
    run_npm(
        ["pack", spec, "--pack-destination", str(dest), "--json", "--silent"],
        600,
        "install Node.js/npm to fetch references",
    )
    tarballs = sorted(dest.glob("*.tgz"))
    if len(tarballs) != 1:
        raise ReferenceUnavailable(f"npm pack {spec} left {len(tarballs)} tarballs in {dest}")
    return tarballs[0]


FILES_LISTING = ".files.json"  # what the verified tarball unpacked to: relative path -> [size, sha256]
_checked_this_process: set[Path] = set()


def _unpacked_files(dest: Path) -> list[str]:
    """Files the tarball unpacked (under package/), not what the harness adds beside them later."""
    found = []
    for path in (dest / "package").rglob("*"):
        relative = path.relative_to(dest)
        if "node_modules" in relative.parts or path.name.startswith(".conformance-driver-"):
            continue
        if path.is_file() and not path.is_symlink():
            found.append(str(relative))
    return sorted(found)


def cache_damage(dest: Path) -> str | None:
    """Why the unpacked files under dest no longer are what the verified tarball held, or None.

    A cache written before listings existed gets its listing now (trusted on first use).
    """
    listing_path = dest / FILES_LISTING
    try:
        listing = json.loads(listing_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not (dest / "package").is_dir():
            return "package/ is missing"
        listing_path.write_text(json.dumps(listing_of(dest, _unpacked_files(dest)), sort_keys=True) + "\n")
        return None
    except (OSError, ValueError) as error:
        return f"{FILES_LISTING} is unreadable ({error})"
    return listing_damage(dest, listing)


def fetch_verified(spec: str, integrity: str, dest: Path) -> Path:
    """Fetch `spec`, verify its sha512 against the pinned value, unpack it to dest (idempotent).

    A cached copy is used only when its marker names the pinned integrity and its files still
    have the sizes and sha256 recorded at unpacking; a truncated or altered cache is fetched again.
    """
    with FETCH_LOCK:
        return _fetch_verified(spec, integrity, dest)


def _fetch_verified(spec: str, integrity: str, dest: Path) -> Path:
    marker = dest / ".verified"
    damage = None
    if marker.exists() and marker.read_text().strip() == integrity:
        if dest in _checked_this_process:
            return dest
        damage = cache_damage(dest)
        if damage is None:
            _checked_this_process.add(dest)
            return dest
        marker.unlink()
    try:
        _fetch_and_unpack(spec, integrity, dest)
    except ReferenceUnavailable as error:
        if damage:
            raise ReferenceUnavailable(f"the cached {spec} in {dest} is damaged ({damage}) and {error}") from None
        raise
    _checked_this_process.add(dest)
    return dest


def _fetch_and_unpack(spec: str, integrity: str, dest: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="npm-pack-") as tmp:
        tarball = npm_pack(spec, Path(tmp))
        actual = sri_sha512(tarball)
        if actual != integrity:
            raise ReferenceUnavailable(
                f"{spec}: integrity mismatch: pinned {integrity}, downloaded {actual}. "
                "The registry served different bytes; do not update the pin without reviewing why."
            )
        staging = dest.with_name(dest.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        with tarfile.open(tarball) as archive:
            extract_data(archive, staging)
        listing = listing_of(staging, _unpacked_files(staging))
        (staging / FILES_LISTING).write_text(json.dumps(listing, sort_keys=True) + "\n")
        shutil.rmtree(dest, ignore_errors=True)
        staging.rename(dest)
    (dest / ".verified").write_text(integrity + "\n")


def extract_data(archive: tarfile.TarFile, dest: Path) -> None:
    """Unpack a verified archive as plain data: tarfile's "data" filter where the Python has it (3.11.4+); on an
    older 3.11 (Debian 12's 3.11.2) the same refusals by hand: a member outside `dest`, a link leading outside it,
    a device or a fifo is a ReferenceUnavailable, nothing is unpacked, and modes come from the archive."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for member in archive.getmembers():
        target = (root / member.name).resolve()
        link = None
        if member.issym():
            link = (target.parent / member.linkname).resolve()
        elif member.islnk():
            link = (root / member.linkname).resolve()
        outside = [p for p in (target, link) if p is not None and p != root and root not in p.parents]
        if outside or not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise ReferenceUnavailable(f"archive member {member.name!r} is outside the archive or not data")
    archive.extractall(dest)  # every member checked above


def ensure_bun() -> Path:
    """The pinned bun: from PATH when it is the pinned version, else from the npm registry."""
    pinned = load_manifest()["bun"]
    on_path = shutil.which("bun")
    version = ""
    if on_path:
        try:
            version = subprocess.run(
                [on_path, "--version"], capture_output=True, text=True, timeout=30, cwd=tempfile.gettempdir()
            ).stdout.strip()  # (never in the caller's directory)
        except (OSError, subprocess.TimeoutExpired):
            version = ""
        if version == pinned["version"]:
            return Path(on_path)
    dest = cache_root() / "bun" / pinned["version"]
    try:
        fetch_verified(f"{pinned['package']}@{pinned['version']}", pinned["integrity"], dest)
    except ReferenceUnavailable as error:
        found = f"bun on PATH ({on_path}) is {version or 'unusable'}" if on_path else "bun is not on PATH"
        raise ReferenceUnavailable(
            f"{found}, not the pinned {pinned['version']}, and fetching it failed: {error}"
        ) from None
    binary = dest / "package" / pinned["binary"]
    binary.chmod(0o755)
    return binary


def ensure_node() -> Path:
    """node from PATH (the `letta` bin's shebang is `#!/usr/bin/env node`)."""
    found = shutil.which("node")
    if not found:
        raise ReferenceUnavailable("node is not on PATH; install Node.js (20+) to run references under node")
    return Path(found)


class ReleaseFetcher(Protocol):
    """What a registry's fetcher module (harness.core.registries: Registry.fetcher) provides."""

    def ensure(self, version: str, runtime: str = ...) -> Path: ...  # letta.js, fetched and verified on first use
    def own_node(self, version: str) -> Path: ...  # the node a release runs under
    def pin(self, version: str) -> dict[str, Any]: ...  # the pin of a published release, checked against a download
    def latest(self) -> tuple[str, str]: ...  # the newest published version and its digest


def fetcher(name: str) -> ReleaseFetcher:
    """The fetcher module of the registry called `name`."""
    return cast(ReleaseFetcher, importlib.import_module(registry(name).fetcher))


def resolve_bundle(spec: ReferenceSpec) -> Path:
    """letta.js for a release or a bundle spec. A bundle run under node uses the dependencies beside it.
    A `git:` or `checkout:` spec has no letta.js: harness.runners.git_reference builds its modules."""
    if spec.is_release:
        return fetcher(spec.kind).ensure(spec.value, spec.runtime)
    if spec.kind != "bundle":
        raise ReferenceUnavailable(
            f"{spec.cli} has no letta.js: it is built from source (harness.runners.git_reference)"
        )
    path = Path(spec.value).expanduser().resolve()
    if not path.is_file():
        raise ReferenceUnavailable(f"bundle {path} does not exist")
    return path


def node_for(spec: ReferenceSpec) -> Path:
    """The node a reference runs under: a release of a registry whose artifacts ship one (PyPI's wheel) on that
    one, anything else on PATH's node."""
    if spec.is_release and registry(spec.kind).own_node:
        return fetcher(spec.kind).own_node(spec.value)
    return ensure_node()


def bundle_version(bundle: Path) -> str | None:
    """The release version from the package.json beside a bundle, if any."""
    try:
        return json.loads((bundle.parent / "package.json").read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None
