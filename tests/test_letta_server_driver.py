"""The letta-server reference (reference/letta_server): its pinned install and its JSON-lines driver.

The driver tests run the real Letta server code (PyPI letta==0.16.8) installed by
`ensure_server_env` into $LETTA_CONFORMANCE_CACHE. They are skipped, with the reason, when
LETTA_CONFORMANCE_OFFLINE=1 or when that environment cannot be installed here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import git_env_for

ROOT = Path(__file__).resolve().parents[1]
SERVER_DIR = ROOT / "reference" / "letta_server"
VERSION = "0.16.8"


def _load_install():
    spec = importlib.util.spec_from_file_location("letta_server_install", SERVER_DIR / "install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


install = _load_install()


# --- the pinned lock (no install needed) ---------------------------------------------------------


def _requirements(path: Path) -> list[str]:
    """Requirement entries of a pip requirements file, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("name", [f"requirements-{VERSION}.txt", f"requirements-{VERSION}-build.txt"])
def test_every_locked_requirement_is_exact_and_hashed(name: str) -> None:
    entries = _requirements(SERVER_DIR / name)
    assert entries
    for entry in entries:
        assert re.match(r"^[a-z0-9-]+==[^ ]+ ", entry), entry
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), entry


def test_lock_pins_the_server_release() -> None:
    entries = _requirements(SERVER_DIR / f"requirements-{VERSION}.txt")
    assert any(entry.startswith(f"letta=={VERSION} ") for entry in entries)


def test_unknown_version_is_refused_without_installing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path))
    with pytest.raises(install.ServerEnvError, match="no pinned lock"):
        install.ensure_server_env("0.0.0-not-pinned")
    assert not (tmp_path / "letta-server").exists()


def test_environment_lives_in_the_cache_not_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path))
    assert install.env_dir(VERSION) == tmp_path / "letta-server" / VERSION


def test_lock_digest_covers_both_locks_and_ignores_comments(tmp_path: Path) -> None:
    lock = tmp_path / "requirements-9.txt"
    build = tmp_path / "requirements-9-build.txt"
    lock.write_text("# header\nletta==9 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    build.write_text("setuptools==1 \\\n    --hash=sha256:" + "1" * 64 + "\n")
    first = install._lock_digest(lock)
    lock.write_text("# another header\n" + lock.read_text().split("\n", 1)[1])
    assert install._lock_digest(lock) == first
    build.write_text(build.read_text().replace("setuptools==1", "setuptools==2"))
    assert install._lock_digest(lock) != first


# --- the driver against the real server code ------------------------------------------------------


@pytest.fixture(scope="module")
def server_python() -> Path:
    if os.environ.get("LETTA_CONFORMANCE_OFFLINE") == "1":
        pytest.skip("LETTA_CONFORMANCE_OFFLINE=1: the letta-server environment is not installed offline")
    try:
        return install.ensure_server_env(VERSION)
    except install.ServerEnvError as error:
        pytest.skip(f"the letta-server {VERSION} environment could not be installed: {error}")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("letta-server")


def isolated_env(home: Path) -> dict[str, str]:
    """No system or global git config, an empty HOME, pinned locale and timezone (as harness.gitenv)."""
    home.mkdir(parents=True, exist_ok=True)
    git_dir = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    return {
        "PATH": os.pathsep.join(dict.fromkeys([git_dir, "/usr/bin", "/bin"])),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


class Driver:
    """One driver process answering JSON lines, as the harness's JSON-lines runners talk to it."""

    def __init__(self, python: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(python), str(install.DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0

    def ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, **payload}).encode() + b"\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.next_id
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def driver(server_python: Path, workspace: Path):
    process = Driver(server_python, isolated_env(workspace / "home"))
    yield process
    process.close()


def _git(repo: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _repo(workspace: Path, name: str, files: dict[str, bytes], commit: bool = True) -> Path:
    env = git_env_for(workspace / "home")
    repo = workspace / name
    repo.mkdir()
    _git(repo, env, "init", "-q", "-b", "main")
    for path, data in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    _git(repo, env, "add", "-A")
    if commit:
        _git(repo, env, "commit", "-q", "-m", "seed")
    return repo


def _compile(driver: Driver, repo: Path, system: str = "You are a test.\n\n{CORE_MEMORY}") -> dict[str, Any]:
    """The protocol's compile request (the fields harness.runners.base.CompileRequest sends)."""
    return driver.ask(
        {
            "op": "compile",
            "memoryDir": str(repo),
            "system": system,
            "agentId": "agent-test",
            "conversationId": "conv-test",
            "now": "2026-01-02T03:04:05.000Z",
            "previousMessageCount": 3,
            "includeMemfs": True,
        }
    )


TINY = {
    "system/persona.md": b"---\ndescription: Who I am\n---\nI am a test.\n",
    "system/human.md": b"---\ndescription: The human\n---\nName: Ada\n",
    "notes/a.md": b"hello\n",
}

TINY_MEMORY = (
    "\n\nReminder: <projection> contains the local path of the memory file projection.\n\n"
    "<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test.\n</self>\n\n"
    "<memory>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n"
    "  <description>The human</description>\n  Name: Ada\n</human>\n"
    "<external_projection>\n${MEMORY_DIR}/\n└── notes/\n    └── a.md\n</external_projection>\n</memory>"
)

TINY_METADATA = (
    "<memory_metadata>\n- AGENT_ID: agent-test\n- CONVERSATION_ID: conv-test\n"
    "- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n"
    "- 3 previous messages between you and the user are stored in recall memory\n</memory_metadata>"
)


@pytest.mark.integration
def test_hello_names_the_server_release(driver: Driver) -> None:
    answer = driver.ask({"op": "hello"})
    assert answer["ok"] is True
    assert answer["info"]["product"] == "letta-server"
    assert answer["info"]["version"] == VERSION
    assert answer["info"]["importError"] is None


@pytest.mark.integration
def test_compile_renders_a_tiny_repository_as_the_server_does(driver: Driver, workspace: Path) -> None:
    repo = _repo(workspace, "tiny", TINY)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    answer = _compile(driver, repo)
    assert answer["ok"] is True and "thrown" not in answer, answer
    assert answer["polluted"] is False
    record = answer["record"]
    assert record["memory"] == TINY_MEMORY
    assert record["memoryMetadata"] == TINY_METADATA
    assert record["coreMemory"] == TINY_MEMORY + "\n\n" + TINY_METADATA
    assert record["content"] == "You are a test.\n\n" + TINY_MEMORY + "\n\n" + TINY_METADATA
    assert record["memfsRevision"] == head
    assert sorted(record["labels"]) == ["notes/a", "system/human", "system/persona"]
    assert "compiledAt" not in record and "rawSystemHash" not in record  # the server keeps neither


@pytest.mark.integration
def test_work_tree_changes_are_not_read(driver: Driver, workspace: Path) -> None:
    repo = _repo(workspace, "dirty", TINY)
    (repo / "system" / "human.md").write_text("uncommitted\n")
    (repo / "system" / "extra.md").write_text("untracked\n")
    assert _compile(driver, repo)["record"]["memory"] == TINY_MEMORY


@pytest.mark.integration
def test_system_prompt_without_placeholder_gets_memory_appended(driver: Driver, workspace: Path) -> None:
    repo = _repo(workspace, "append", TINY)
    record = _compile(driver, repo, system="Base prompt.  ")["record"]
    # get_system_message_from_compiled_memory appends "\n\n{CORE_MEMORY}" without trimming the prompt
    assert record["content"] == "Base prompt.  \n\n" + record["coreMemory"]


@pytest.mark.integration
def test_upstream_exception_comes_back_as_thrown(driver: Driver, workspace: Path) -> None:
    repo = _repo(workspace, "unborn", {}, commit=False)
    answer = _compile(driver, repo)
    assert answer["ok"] is True and "record" not in answer, answer
    assert answer["thrown"].startswith("CalledProcessError: ")


@pytest.mark.integration
def test_missing_directory_is_an_agent_without_a_repository(driver: Driver, workspace: Path) -> None:
    record = _compile(driver, workspace / "does-not-exist")["record"]
    assert record["memory"] == ""
    assert record["memfsRevision"] is None


@pytest.mark.integration
def test_bad_requests_are_errors_not_records(driver: Driver) -> None:
    assert driver.ask({"op": "compile", "memoryDir": 3})["ok"] is False
    assert driver.ask({"op": "lifecycle_open", "session": "s1"})["ok"] is False
    assert (
        driver.ask(
            {
                "op": "compile",
                "memoryDir": "/x",
                "system": "",
                "agentId": "a",
                "conversationId": "c",
                "now": "not a date",
            }
        )["ok"]
        is False
    )


@pytest.mark.integration
def test_skills_are_request_scoped_not_stored(driver: Driver, workspace: Path) -> None:
    files = {**TINY, "skills/deploy/SKILL.md": b"---\ndescription: Ship it\n---\nSteps.\n"}
    record = _compile(driver, _repo(workspace, "skills", files))["record"]
    assert record["memory"] == TINY_MEMORY  # skills/ is not part of the stored memory
    assert record["availableSkills"] == (
        "\n\n<available_skills>\n${MEMORY_DIR}/skills\n└── deploy/\n    └── SKILL.md (Ship it)\n</available_skills>"
    )
    assert record["requestContent"] == record["content"] + record["availableSkills"]


@pytest.mark.integration
def test_a_memory_dir_that_is_a_git_directory_is_stored_as_the_agent_s_repository(
    driver: Driver, workspace: Path
) -> None:
    """The server's storage holds one git directory (`repo.git`): a bare repository, or a work tree's .git,
    is that directory itself, and reads as the work tree it was made from. (The bare copy keeps its loose
    ref: storage holds files only, so a git directory whose refs/ is empty, as `git clone --bare` leaves it
    with every ref packed, is no git directory once the server downloads it, and reading it fails.)"""
    env = git_env_for(workspace / "home")
    source = _repo(workspace, "bare-source", TINY)
    head = _git(source, env, "rev-parse", "HEAD").strip()
    bare = workspace / "bare.git"
    shutil.copytree(source / ".git", bare)
    _git(workspace, env, "--git-dir", str(bare), "config", "core.bare", "true")
    for memory_dir in (bare, source / ".git"):
        record = _compile(driver, memory_dir)["record"]
        assert (record["memory"], record["memfsRevision"]) == (TINY_MEMORY, head), memory_dir


@pytest.mark.integration
def test_a_gitdir_file_names_the_repository_stored(driver: Driver, workspace: Path) -> None:
    repo = _repo(workspace, "separate", TINY)
    head = _git(repo, git_env_for(workspace / "home"), "rev-parse", "HEAD").strip()
    (repo / ".git").rename(workspace / "separate.git")
    (repo / ".git").write_text("gitdir: ../separate.git\n")
    record = _compile(driver, repo)["record"]
    assert (record["memory"], record["memfsRevision"]) == (TINY_MEMORY, head)


@pytest.mark.integration
def test_a_directory_inside_a_git_directory_is_no_repository(driver: Driver, workspace: Path) -> None:
    repo = _repo(workspace, "inside", TINY)
    for memory_dir in (repo / ".git" / "refs", repo / "notes"):
        record = _compile(driver, memory_dir)["record"]
        assert (record["memory"], record["memfsRevision"]) == ("", None), memory_dir
