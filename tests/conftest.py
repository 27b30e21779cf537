"""Shared fixtures: an isolated git, small repositories, and (for `integration`) the real references.

Integration tests need bun and letta-code releases, fetched and verified by harness.releases into
$LETTA_CONFORMANCE_CACHE. They are skipped only when LETTA_CONFORMANCE_OFFLINE=1; otherwise a
reference that cannot be set up fails the test.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

OFFLINE = os.environ.get("LETTA_CONFORMANCE_OFFLINE") == "1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "integration: runs the real bun and letta-code releases (skipped only with LETTA_CONFORMANCE_OFFLINE=1)",
    )


@pytest.fixture(autouse=True)
def _references_run_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see what the references do now, never the result store (harness.runners.result_store): a test of
    the store itself removes LETTA_CONFORMANCE_NO_CACHE again."""
    monkeypatch.setenv("LETTA_CONFORMANCE_NO_CACHE", "1")


def git_env_for(home: Path, ceiling: Path | None = None) -> dict[str, str]:
    """No system or global git config, an empty HOME, pinned locale and timezone; nothing inherited."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return env


@pytest.fixture
def git_env(tmp_path: Path) -> dict[str, str]:
    return git_env_for(tmp_path / "home", ceiling=tmp_path)


class GitRepo:
    """A plain git repository built with git itself (porcelain, isolated env)."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path, self.env = path, env

    def git(self, *args: str | bytes, input: bytes | None = None) -> bytes:
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=self.env, input=input, capture_output=True, check=False
        )
        if done.returncode != 0:
            raise AssertionError(f"git {args!r} failed: {done.stderr.decode('utf-8', 'replace')}")
        return done.stdout

    def write(self, name: str | bytes, data: str | bytes) -> Path:
        target = self.path / os.fsdecode(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return target

    def commit(self, files: dict[str | bytes, str | bytes], message: str = "commit") -> str:
        for name, data in files.items():
            self.write(name, data)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").decode("ascii").strip()


@pytest.fixture
def make_repo(tmp_path: Path, git_env: dict[str, str]) -> Callable[..., GitRepo]:
    """`make_repo(files, name="memory")`: a repository with one commit holding `files` (empty dict: unborn)."""

    def make(files: dict[str | bytes, str | bytes] | None = None, name: str = "memory") -> GitRepo:
        path = tmp_path / name
        path.mkdir(parents=True)
        repo = GitRepo(path, git_env)
        repo.git("init", "-q", "--initial-branch=main")
        if files:
            repo.commit(files)
        return repo

    return make


# --- the real references (integration) ----------------------------------------------------------


def _need_references() -> None:
    if OFFLINE:
        pytest.skip("LETTA_CONFORMANCE_OFFLINE=1: the real bun and letta-code releases are not used")


@pytest.fixture(scope="session")
def reference_bun() -> Path:
    """The pinned bun (harness.releases.ensure_bun). Fails, never skips, when it cannot be set up online."""
    _need_references()
    from harness.acquire.releases import ensure_bun

    return ensure_bun()


@pytest.fixture(scope="session")
def release_bundle() -> Callable[[str], Path]:
    """`release_bundle("0.32.18")`, `release_bundle("pypi:0.34.12")`: letta.js of a pinned, verified release."""
    _need_references()
    from harness.acquire.releases import resolve_bundle
    from harness.core.reference import ReferenceSpec

    return lambda text: resolve_bundle(ReferenceSpec.parse(text))


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH directory holding a fake bun (the reference: the port's answers); an empty cache."""
    directory = tmp_path / "bin"
    from fake_reference import install_fake_bun  # the fake reference, for the tests that ask for bin_dir

    install_fake_bun(directory)
    monkeypatch.setenv("PATH", f"{directory}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return directory
