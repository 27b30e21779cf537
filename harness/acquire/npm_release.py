"""letta-code releases published on the npm registry (@letta-ai/letta-code): the fetcher of
harness.core.registries' `npm` row.

A release's tarball is fetched with `npm pack`, checked against its pinned sha512 integrity and unpacked once
into the cache (harness.acquire.releases.fetch_verified); the pinned runtime dependencies (lockfiles in
reference/runtime-deps/) are installed beside it, and under node it gets an install of its own (node_install).
Also what `conformance pin npm:X` and `--latest` ask the registry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.acquire import releases
from harness.acquire.manifest import REFERENCE_DIR
from harness.acquire.releases import ReferenceUnavailable, cache_root, npm_pack, run_npm, sri_sha512
from harness.core.child import run_group
from harness.core.reference import DEFAULT_RUNTIME
from harness.core.registries import load_manifest, pin_of, pinned_versions, registry

REGISTRY = registry("npm")


def _lock_digest(source: Path) -> str:
    return hashlib.sha256((source / "package-lock.json").read_bytes()).hexdigest()


def _install_runtime_deps(name: str, package_dir: Path) -> None:
    """Install the pinned lockfile reference/runtime-deps/NAME beside the bundle (`npm ci` checks
    every package's integrity against the lockfile; no install scripts run). Reinstalled when the
    lockfile changes. 0.25.x import sharp's native binary at load; under node every release needs `ws`."""
    source = REFERENCE_DIR / "runtime-deps" / name
    if not (source / "package-lock.json").exists():
        raise ReferenceUnavailable(f"reference/runtime-deps/{name}/package-lock.json is missing")
    deps_dir = package_dir.parent / f"deps-{name}"
    marker = deps_dir / ".installed"
    digest = _lock_digest(source)
    if not marker.exists() or marker.read_text().strip() not in ("ok", digest):
        shutil.rmtree(deps_dir, ignore_errors=True)
        deps_dir.mkdir(parents=True)
        for file in ("package.json", "package-lock.json"):
            shutil.copy(source / file, deps_dir / file)
        done = run_group(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--silent"], 600, cwd=deps_dir)
        if done.returncode != 0:
            raise ReferenceUnavailable(f"npm ci for {name} failed: {done.stderr.strip()[-800:]}")
        marker.write_text(digest + "\n")
    link = package_dir / "node_modules"
    if link.is_symlink() and os.readlink(link) != str(deps_dir / "node_modules"):
        link.unlink()
    if not link.exists():
        link.symlink_to(deps_dir / "node_modules")


def node_install(bundle: Path, deps: str | None) -> Path:
    """A node-runtime install of a bundle: letta.js and package.json linked into their own directory,
    with the release's runtime dependencies in node_modules beside them, so node resolves the
    bundle's imports as in `npm install -g`, and the bun install beside the original stays as it is."""
    home = bundle.parent.parent / "node-runtime"
    home.mkdir(parents=True, exist_ok=True)
    for name in ("letta.js", "package.json"):
        link, target = home / name, bundle.parent / name
        if target.exists() and not link.is_symlink():
            link.symlink_to(target)
    if deps:
        _install_runtime_deps(deps, home)
    return home / "letta.js"


def ensure(version: str, runtime: str = DEFAULT_RUNTIME) -> Path:
    """Path to letta.js of a pinned npm release, fetched and verified on first use, set up to run
    under `runtime` (node: beside its pinned runtime dependencies, `node_runtime_deps`)."""
    pinned = pin_of(REGISTRY.name, version)
    if pinned is None:
        known = ", ".join(pinned_versions(REGISTRY.name))
        raise ReferenceUnavailable(f"letta-code {version} is not pinned in reference/manifest.json (pinned: {known})")
    dest = cache_root() / REGISTRY.cache_part / version
    releases.fetch_verified(f"{load_manifest()['package']}@{version}", pinned[REGISTRY.digest_key], dest)
    package_dir = dest / "package"
    if pinned.get("runtime_deps"):
        with releases.FETCH_LOCK:
            _install_runtime_deps(pinned["runtime_deps"], package_dir)
    bundle = package_dir / "letta.js"
    if not bundle.exists():
        raise ReferenceUnavailable(f"letta-code {version}: the tarball has no letta.js")
    if runtime == "node":
        return node_install(bundle, pinned.get("node_runtime_deps"))
    return bundle


def own_node(version: str) -> Path:
    """An npm release ships no Node: node from PATH."""
    return releases.ensure_node()


def pin(version: str) -> dict[str, Any]:
    """The pin of a release the registry publishes: its dist.integrity, checked against a download."""
    package = load_manifest()["package"]
    done = run_npm(["view", f"{package}@{version}", "dist.integrity", "--json"], 120, "pinning asks the npm registry")
    integrity = json.loads(done.stdout or "null")
    if not isinstance(integrity, str):
        raise ReferenceUnavailable(f"the npm registry has no {package}@{version}")
    with tempfile.TemporaryDirectory(prefix="pin-npm-") as tmp:
        actual = sri_sha512(npm_pack(f"{package}@{version}", Path(tmp)))
    if actual != integrity:
        raise ReferenceUnavailable(f"{package}@{version}: the registry publishes {integrity}, the download is {actual}")
    return {REGISTRY.digest_key: integrity, **REGISTRY.pin_extra}


def latest() -> tuple[str, str]:
    """The registry's `latest` version of letta-code and its dist.integrity (on demand only)."""
    package = load_manifest()["package"]
    done = run_npm(
        ["view", f"{package}@latest", "version", "dist.integrity", "--json"], 120, "--latest asks the npm registry"
    )
    data = json.loads(done.stdout)
    return str(data["version"]), str(data["dist.integrity"])
