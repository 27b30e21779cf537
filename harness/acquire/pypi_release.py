"""letta-code releases published on PyPI (the `letta` package from 0.32.13 on): fetch, verify, unpack.

Each release is one manylinux wheel holding the same kind of `letta.js` bundle as npm's, its
`node_modules`, and a Node binary (`letta_code/_payload/bin/node`, how PyPI users run it). The
wheel is downloaded with pip (`pip download --no-deps`, so the configured index, and pip's own check
of the index's hash), checked against the sha256 pinned in reference/manifest.json, and only what
a reference needs is unpacked: `letta.js`, `package.json`, the wheel's `manifest.json` and its
`node_modules` beside `letta.js` (the bundle imports some of them at load: bun would otherwise
fetch them from the npm registry, unverified), and the Node binary for the `@node` runtime, which
is stored once by its sha256 and shared by every release. The wheel itself is not kept.

The fetcher of harness.core.registries' `pypi` row: ensure, own_node, pin (`conformance pin pypi:X`) and
latest (`--latest`) raise harness.acquire.releases.ReferenceUnavailable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from harness.acquire import releases
from harness.acquire.releases import ReferenceUnavailable, cache_root
from harness.acquire.unpacked_check import listing_damage, listing_of, sha256_of
from harness.core.child import run_group
from harness.core.reference import DEFAULT_RUNTIME
from harness.core.registries import pin_of, pinned_versions, registry

REGISTRY = registry("pypi")

PACKAGE = "letta"
PLATFORM = "manylinux_2_28_x86_64"
PAYLOAD = "letta_code/_payload/"
APP = PAYLOAD + "app/"
NODE_MEMBER = PAYLOAD + "bin/node"
BUN_MEMBERS = (APP + "letta.js", APP + "package.json", PAYLOAD + "manifest.json")
NODE_MODULES = APP + "node_modules/"


class WheelUnavailable(Exception):
    """A wheel that cannot be fetched, verified or unpacked; the message says why and what to do."""


def _pip(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip", *args]
    try:
        done = run_group(command, timeout)
    except subprocess.TimeoutExpired:
        raise WheelUnavailable(f"pip {args[0]} {args[-1]} took over {timeout:.0f} s") from None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        raise WheelUnavailable(f"pip {args[0]} {args[-1]} failed: {' / '.join(tail) or done.returncode}")
    return done


def _platform_args() -> list[str]:
    return ["--no-deps", "--only-binary=:all:", "--platform", PLATFORM, "--disable-pip-version-check"]


def download_wheel(version: str, dest: Path) -> Path:
    """`pip download letta==VERSION` for the pinned platform into dest (nothing is installed)."""
    dest.mkdir(parents=True, exist_ok=True)
    _pip(["download", *_platform_args(), "--dest", str(dest), "--quiet", f"{PACKAGE}=={version}"], 900)
    wheels = sorted(dest.glob(f"{PACKAGE}-{version}-*.whl"))
    if len(wheels) != 1:
        raise WheelUnavailable(f"pip download {PACKAGE}=={version} left {len(wheels)} wheels in {dest}")
    return wheels[0]


def index_entry(version: str | None) -> dict[str, Any]:
    """What the index publishes for `letta==VERSION` (None: the newest) on the pinned platform:
    version, wheel name and sha256 (from pip's installation report; only metadata is downloaded)."""
    requirement = PACKAGE if version is None else f"{PACKAGE}=={version}"
    with tempfile.TemporaryDirectory(prefix="pypi-report-") as tmp:
        report = Path(tmp) / "report.json"
        _pip(
            [
                "install",
                "--dry-run",
                "--ignore-installed",
                *_platform_args(),
                "--target",
                str(Path(tmp) / "t"),
                "--quiet",
                "--report",
                str(report),
                requirement,
            ],
            300,
        )
        items = json.loads(report.read_text(encoding="utf-8")).get("install", [])
    if len(items) != 1:
        raise WheelUnavailable(f"the index has no single {requirement} wheel for {PLATFORM}")
    info = items[0]["download_info"]
    sha = info.get("archive_info", {}).get("hashes", {}).get("sha256")
    if not sha:
        raise WheelUnavailable(f"the index publishes no sha256 for {requirement}")
    return {"version": items[0]["metadata"]["version"], "wheel": info["url"].rsplit("/", 1)[-1], "sha256": sha}


def fetch_verified_wheel(version: str, pinned: dict[str, Any], workdir: Path) -> Path:
    """Download the wheel and check its sha256 against the pin; a mismatch is never unpacked."""
    wheel = download_wheel(version, workdir)
    actual = sha256_of(wheel)
    if actual != pinned["sha256"]:
        raise WheelUnavailable(
            f"{PACKAGE} {version}: sha256 mismatch: pinned {pinned['sha256']}, downloaded {actual}. "
            "The index served different bytes; do not update the pin without reviewing why."
        )
    return wheel


def unpack_members(wheel: Path, dest: Path, wanted: tuple[str, ...], prefix: str | None = None) -> list[str]:
    """Extract `wanted` members (and every member under `prefix`) below dest, payload paths kept.

    Every named member must be present: a wheel without the expected files is refused."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        missing = [m for m in wanted if m not in names]
        if missing:
            raise WheelUnavailable(f"{wheel.name} has no {', '.join(missing)}: not a letta-code wheel")
        chosen = list(wanted) + sorted(n for n in names if prefix and n.startswith(prefix) and not n.endswith("/"))
        for name in chosen:
            target = dest / name
            if not target.resolve().is_relative_to(dest.resolve()):
                raise WheelUnavailable(f"{wheel.name}: member {name!r} points outside the cache")
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(name) as source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
        return chosen


def shared_node(wheel: Path, cache: Path) -> Path:
    """The wheel's Node binary, stored once by sha256 under cache/node/ (every wheel ships the same one)."""
    with tempfile.TemporaryDirectory(prefix="node-", dir=cache) as tmp:
        unpack_members(wheel, Path(tmp), (NODE_MEMBER,))
        extracted = Path(tmp) / NODE_MEMBER
        home = cache / "node" / sha256_of(extracted)
        binary = home / "node"
        if not binary.exists():
            home.mkdir(parents=True, exist_ok=True)
            extracted.chmod(0o755)
            os.replace(extracted, binary)
    return binary


LISTING = ".files.json"  # what the verified wheel unpacked to: relative path -> [size, sha256]


def unpacked_damage(dest: Path) -> str | None:
    """Why the files unpacked under dest are no longer what the verified wheel held, or None."""
    try:
        listing = json.loads((dest / LISTING).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return f"{LISTING} is unreadable ({error})"
    return listing_damage(dest, listing)


def ensure_unpacked(version: str, pinned: dict[str, Any], cache: Path) -> Path:
    """cache/pypi/VERSION holding letta.js with the wheel's node_modules beside it and a link `node` to
    the shared Node binary; fetched and verified on first use, fetched again when damaged or
    pinned to other bytes. Returns letta.js."""
    dest = cache / REGISTRY.cache_part / version
    marker = dest / ".verified"
    complete = (dest / NODE_MODULES).is_dir() and (dest / "node").exists()  # caches of an older layout lack them
    if (
        complete
        and marker.exists()
        and marker.read_text().strip() == pinned["sha256"]
        and unpacked_damage(dest) is None
    ):
        return dest / APP / "letta.js"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"wheel-{version}-", dir=dest.parent) as tmp:
        wheel = fetch_verified_wheel(version, pinned, Path(tmp))
        staging = Path(tmp) / "unpacked"
        names = unpack_members(wheel, staging, BUN_MEMBERS, prefix=NODE_MODULES)
        node = shared_node(wheel, cache)
        (staging / LISTING).write_text(json.dumps(listing_of(staging, names), sort_keys=True) + "\n")
        (staging / "node").symlink_to(node)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(staging, dest)
    marker.write_text(pinned["sha256"] + "\n")
    return dest / APP / "letta.js"


_UNPACKED_THIS_PROCESS: set[str] = set()


def ensure(version: str, runtime: str = DEFAULT_RUNTIME) -> Path:
    """Path to letta.js of a pinned PyPI release, fetched and verified on first use, with the wheel's
    node_modules beside it (for bun and node alike) and its Node binary (own_node)."""
    pinned = pin_of(REGISTRY.name, version)
    if pinned is None:
        known = ", ".join(pinned_versions(REGISTRY.name))
        raise ReferenceUnavailable(
            f"letta {version} (PyPI) is not pinned in reference/manifest.json (pinned: {known}); "
            f"pin it with `conformance pin {REGISTRY.name}:{version}`"
        )
    dest = cache_root() / REGISTRY.cache_part / version
    if version in _UNPACKED_THIS_PROCESS:
        return dest / APP / "letta.js"
    with releases.FETCH_LOCK:
        try:
            bundle = ensure_unpacked(version, pinned, cache_root())
        except WheelUnavailable as error:
            raise ReferenceUnavailable(str(error)) from None
    _UNPACKED_THIS_PROCESS.add(version)
    return bundle


def own_node(version: str) -> Path:
    """The Node binary a PyPI release ships (one file shared by every release in the cache)."""
    ensure(version)
    return cache_root() / REGISTRY.cache_part / version / "node"


def pin(version: str) -> dict[str, Any]:
    """The pin of a release PyPI publishes: its wheel and sha256 (pip's report), checked against a download."""
    try:
        entry = index_entry(version)
        with tempfile.TemporaryDirectory(prefix="pin-pypi-") as tmp:
            wheel = fetch_verified_wheel(version, entry, Path(tmp))
            size = wheel.stat().st_size
    except WheelUnavailable as error:
        raise ReferenceUnavailable(str(error)) from None
    return {"wheel": entry["wheel"], REGISTRY.digest_key: entry[REGISTRY.digest_key], "size": size}


def latest() -> tuple[str, str]:
    """PyPI's newest release and its wheel's sha256 (`pip install --dry-run --report`)."""
    try:
        wheel = index_entry(None)
    except WheelUnavailable as error:
        raise ReferenceUnavailable(str(error)) from None
    return str(wheel["version"]), str(wheel[REGISTRY.digest_key])
