"""Getting references onto the machine: pinned letta-code releases and bun, from the npm registry.

Tarballs are fetched with `npm pack`, checked against the sha512 integrity pinned in
reference/manifest.json, and unpacked once into a cache outside the repository
($LETTA_CONFORMANCE_CACHE, default ~/.cache/letta-conformance). A bundle path or an
upstream checkout (built with upstream's own `bun run build`) are references too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO_ROOT / "reference"
MANIFEST_PATH = REFERENCE_DIR / "manifest.json"
DRIVER_PATH = REFERENCE_DIR / "driver.mjs"


_FETCH_LOCK = threading.RLock()  # parallel workers starting their references fetch each package once


class ReferenceUnavailable(Exception):
    """A reference that cannot be set up; the message says why and what to do."""


def cache_root() -> Path:
    configured = os.environ.get("LETTA_CONFORMANCE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "letta-conformance"


def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ReferenceSpec:
    """What `--reference` names: `npm:0.32.18`, `bundle:PATH` or `checkout:PATH`."""

    kind: str
    value: str

    @property
    def label(self) -> str:
        return self.value if self.kind == "npm" else f"{self.kind}:{self.value}"

    @classmethod
    def parse(cls, text: str) -> ReferenceSpec:
        kind, sep, value = text.partition(":")
        if not sep:
            kind, value = "npm", text
        if kind not in ("npm", "bundle", "checkout") or not value:
            raise ValueError(f"--reference {text!r}: use npm:VERSION, bundle:PATH or checkout:PATH")
        return cls(kind, value)


def sri_sha512(data_path: Path) -> str:
    digest = hashlib.sha512()
    with data_path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode("ascii")


def npm_pack(spec: str, dest: Path) -> Path:
    """Download one package tarball from the npm registry (no install scripts run)."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            ["npm", "pack", spec, "--pack-destination", str(dest), "--json", "--silent"],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
    except FileNotFoundError:
        raise ReferenceUnavailable("npm is not on PATH; install Node.js/npm to fetch references") from None
    if done.returncode != 0:
        raise ReferenceUnavailable(f"npm pack {spec} failed: {done.stderr.strip()[-800:]}")
    tarballs = sorted(dest.glob("*.tgz"))
    if len(tarballs) != 1:
        raise ReferenceUnavailable(f"npm pack {spec} left {len(tarballs)} tarballs in {dest}")
    return tarballs[0]


def fetch_verified(spec: str, integrity: str, dest: Path) -> Path:
    """Fetch `spec`, verify its sha512 against the pinned value, unpack it to dest (idempotent)."""
    with _FETCH_LOCK:
        return _fetch_verified(spec, integrity, dest)


def _fetch_verified(spec: str, integrity: str, dest: Path) -> Path:
    marker = dest / ".verified"
    if marker.exists() and marker.read_text().strip() == integrity:
        return dest
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
            archive.extractall(staging, filter="data")
        shutil.rmtree(dest, ignore_errors=True)
        staging.rename(dest)
    marker.write_text(integrity + "\n")
    return dest


def ensure_bun() -> Path:
    """The pinned bun: from PATH when it is the pinned version, else from the npm registry."""
    pinned = load_manifest()["bun"]
    on_path = shutil.which("bun")
    if on_path:
        try:
            version = subprocess.run([on_path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            version = ""
        if version == pinned["version"]:
            return Path(on_path)
    dest = cache_root() / "bun" / pinned["version"]
    fetch_verified(f"{pinned['package']}@{pinned['version']}", pinned["integrity"], dest)
    binary = dest / "package" / pinned["binary"]
    binary.chmod(0o755)
    return binary


def _install_runtime_deps(name: str, package_dir: Path) -> None:
    """0.25.x import sharp's native binary at load: install the pinned lockfile beside the bundle."""
    source = REFERENCE_DIR / "runtime-deps" / name
    deps_dir = package_dir.parent / f"deps-{name}"
    marker = deps_dir / ".installed"
    if not marker.exists():
        shutil.rmtree(deps_dir, ignore_errors=True)
        deps_dir.mkdir(parents=True)
        for file in ("package.json", "package-lock.json"):
            shutil.copy(source / file, deps_dir / file)
        done = subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--silent"],
            cwd=deps_dir, capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        if done.returncode != 0:
            raise ReferenceUnavailable(f"npm ci for {name} failed: {done.stderr.strip()[-800:]}")
        marker.write_text("ok\n")
    link = package_dir / "node_modules"
    if not link.exists():
        link.symlink_to(deps_dir / "node_modules")


def ensure_release(version: str) -> Path:
    """Path to letta.js of a pinned npm release, fetched and verified on first use."""
    manifest = load_manifest()
    pinned = manifest["releases"].get(version)
    if pinned is None:
        known = ", ".join(manifest["releases"])
        raise ReferenceUnavailable(f"letta-code {version} is not pinned in reference/manifest.json (pinned: {known})")
    dest = cache_root() / "letta-code" / version
    fetch_verified(f"{manifest['package']}@{version}", pinned["integrity"], dest)
    package_dir = dest / "package"
    if pinned.get("runtime_deps"):
        with _FETCH_LOCK:
            _install_runtime_deps(pinned["runtime_deps"], package_dir)
    bundle = package_dir / "letta.js"
    if not bundle.exists():
        raise ReferenceUnavailable(f"letta-code {version}: the tarball has no letta.js")
    return bundle


def build_checkout(checkout: Path, bun: Path) -> Path:
    """Build letta.js from an upstream checkout with its own `bun install && bun run build`."""
    if not (checkout / "package.json").exists():
        raise ReferenceUnavailable(f"{checkout} is not a letta-code checkout (no package.json)")
    for command in ([str(bun), "install", "--frozen-lockfile"], [str(bun), "run", "build"]):
        done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=False, timeout=1800)
        if done.returncode != 0:
            raise ReferenceUnavailable(f"{' '.join(command)} in {checkout} failed: {done.stderr.strip()[-800:]}")
    bundle = checkout / "letta.js"
    if not bundle.exists():
        raise ReferenceUnavailable(f"building {checkout} produced no letta.js")
    return bundle


def resolve_bundle(spec: ReferenceSpec, bun: Path) -> Path:
    if spec.kind == "npm":
        return ensure_release(spec.value.removeprefix("letta-code@"))
    path = Path(spec.value).expanduser().resolve()
    if spec.kind == "bundle":
        if not path.is_file():
            raise ReferenceUnavailable(f"bundle {path} does not exist")
        return path
    return build_checkout(path, bun)


def bundle_version(bundle: Path) -> str | None:
    """The release version from the package.json beside a bundle, if any."""
    try:
        return json.loads((bundle.parent / "package.json").read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None
