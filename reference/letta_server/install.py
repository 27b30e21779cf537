"""The isolated, hash-checked environment the letta-server reference driver runs in.

`ensure_server_env(version)` returns the python of a venv under the cache
($LETTA_CONFORMANCE_CACHE, default ~/.cache/letta-conformance) at
`letta-server/<version>/venv`, creating it on first use from the pinned locks beside this file:
`pip install --no-deps --require-hashes` of `requirements-<version>-build.txt` (the pinned
setuptools the one sdist builds with), then of `requirements-<version>.txt`, so pip installs
nothing that is not pinned by sha256, and fetches only from the index pip is configured with (no
index, find-links or URL is passed here). Nothing is installed inside the repository. A venv
whose marker does not match the lock (changed lock, other interpreter, interrupted install) is
rebuilt.

    python reference/letta_server/install.py [VERSION]     # prints the venv's python
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "driver.py"
DEFAULT_VERSION = "0.16.8"
MARKER = "installed.json"

#: what the driver imports; checked in the new venv before it is accepted
SMOKE_IMPORTS = (
    "letta.schemas.memory",
    "letta.prompts.prompt_generator",
    "letta.services.memory_repo.block_markdown",
    "letta.services.memory_repo.path_mapping",
    "letta.services.memory_repo.git_operations",
    "letta.services.memory_repo.memfs_client_base",
    "letta.schemas.user",
)


class ServerEnvError(Exception):
    """The environment could not be created (no lock for the version, pip failed, an import failed)."""


def cache_root() -> Path:
    configured = os.environ.get("LETTA_CONFORMANCE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "letta-conformance"


def env_dir(version: str) -> Path:
    return cache_root() / "letta-server" / version


def lock_path(version: str) -> Path:
    return HERE / f"requirements-{version}.txt"


def _lock_digest(lock: Path) -> str:
    """Digest of what the locks install (comments aside): the lock and its build lock, if any."""
    digest = hashlib.sha256()
    for path in (lock.with_name(f"{lock.stem}-build.txt"), lock):
        if path.is_file():
            lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
            digest.update(path.name.encode() + b"\0" + "\n".join(lines).encode() + b"\0")
    return digest.hexdigest()


def _interpreter_tag() -> str:
    return f"{sys.implementation.name}-{sys.version_info.major}.{sys.version_info.minor}"


def installed_marker(version: str) -> dict | None:
    """What the last successful install recorded (timings, disk), or None."""
    try:
        return json.loads((env_dir(version) / MARKER).read_text())
    except (OSError, ValueError):
        return None


def ensure_server_env(version: str = DEFAULT_VERSION, *, log=None) -> Path:
    """The python of the letta-server `version` venv, installed from its pinned lock if needed."""
    lock = lock_path(version)
    if not lock.is_file():
        raise ServerEnvError(f"letta-server {version}: no pinned lock {lock.name} in {HERE}")
    root = env_dir(version)
    python = root / "venv" / "bin" / "python"
    want = {"lock_sha256": _lock_digest(lock), "interpreter": _interpreter_tag()}
    marker = installed_marker(version)
    if _matches(marker, want) and python.exists():
        return python
    root.mkdir(parents=True, exist_ok=True)
    with _exclusive(root / ".install.lock"):
        marker = installed_marker(version)  # another process may have installed it meanwhile
        if _matches(marker, want) and python.exists():
            return python
        _install(version, lock, root, want, log or (lambda message: None))
    return python


def _matches(marker: dict | None, want: dict) -> bool:
    return marker is not None and all(marker.get(key) == value for key, value in want.items())


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    result = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-2000:]
        raise ServerEnvError(f"{what} failed (exit {result.returncode}): {tail}")


def _install(version: str, lock: Path, root: Path, want: dict, log) -> None:
    (root / MARKER).unlink(missing_ok=True)
    final = root / "venv"
    building = Path(tempfile.mkdtemp(prefix="venv.", dir=root))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    started = time.perf_counter()
    try:
        log(f"letta-server {version}: creating a venv in {root}")
        _run([sys.executable, "-m", "venv", str(building)], env, "python -m venv")
        python = building / "bin" / "python"
        pip = [str(python), "-m", "pip", "install", "--no-input", "--no-deps", "--require-hashes"]
        # The one sdist (demjson3, pure Python) builds with --no-build-isolation against the pinned
        # setuptools installed first, rather than an unpinned build environment fetched from the index.
        build_lock = lock.with_name(f"{lock.stem}-build.txt")
        if build_lock.is_file():
            log(f"letta-server {version}: pip install --require-hashes -r {build_lock.name}")
            _run([*pip, "-r", str(build_lock)], env, "pip install (build requirements)")
        log(f"letta-server {version}: pip install --require-hashes -r {lock.name}")
        _run([*pip, "--no-build-isolation", "-r", str(lock)], env, "pip install")
        installed_at = time.perf_counter()
        check = "; ".join(f"import {module}" for module in SMOKE_IMPORTS)
        smoke_env = {**env, "LETTA_DIR": str(Path(tempfile.mkdtemp(prefix="letta-dir.", dir=root)))}
        try:
            _run([str(python), "-c", check], smoke_env, "importing letta's modules")
        finally:
            shutil.rmtree(smoke_env["LETTA_DIR"], ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        building.rename(final)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    done = time.perf_counter()
    record = {
        **want,
        "version": version,
        "lock": lock.name,
        "install_seconds": round(installed_at - started, 1),
        "total_seconds": round(done - started, 1),
        "disk_bytes": _disk_bytes(final),
        "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (root / MARKER).write_text(json.dumps(record, indent=2) + "\n")
    log(f"letta-server {version}: installed in {record['total_seconds']} s, {record['disk_bytes'] / 1e6:.0f} MB")


def _disk_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    version = args[0] if args else DEFAULT_VERSION
    try:
        python = ensure_server_env(version, log=lambda message: print(message, file=sys.stderr))
    except ServerEnvError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
