"""Small memory repositories and compile inputs shared by test_compiler.py and its measurement.

`build(spec, root, env)` makes the repository with plain git (isolated env, fixed dates).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

AGENT = "agent-t"
CONVERSATION = "conv-t"
NOW = "2026-01-02T03:04:05.678Z"
SYSTEM = "You are a test agent.\n\n{CORE_MEMORY}"

SMALL = {
    "system/persona.md": "---\ndescription: Who I am\n---\nI am a test agent.\n\n",
    "system/human.md": "---\ndescription: The user\n---\n\n- likes tests\n",
    "system/project/notes.md": "plain notes, no frontmatter\n",
    "system/Zeta.md": "zeta\n",
    "system/_under.md": "under\n",
    "notes/todo.md": "# todo\n",
    "notes/deep/a.md": "a\n",
    "reference.md": "root file\n",
    "skills/x/SKILL.md": "---\nname: x\n---\nskill body\n",
    "README.txt": "not markdown\n",
}


@dataclass(frozen=True)
class RepoSpec:
    kind: str = "git"  # git | unborn | plain (a directory, not a repository) | missing
    files: dict[str, str] = field(default_factory=dict)
    noise: dict[str, str | None] = field(default_factory=dict)  # after the commit: write, or delete (None)
    stage: bool = False  # `git add -A` the noise


REPOS: dict[str, RepoSpec] = {
    "small": RepoSpec(files=SMALL),
    # Uncommitted edits, a staged edit, an untracked file and a deleted file: HEAD is what counts.
    "small_dirty": RepoSpec(
        files=SMALL,
        noise={
            "system/human.md": "---\ndescription: DIRTY\n---\nDIRTY worktree edit\n",
            "system/untracked.md": "UNTRACKED\n",
            "notes/todo.md": None,
        },
    ),
    "small_staged": RepoSpec(
        files=SMALL,
        noise={"system/human.md": "---\ndescription: STAGED\n---\nSTAGED\n", "system/new.md": "STAGED NEW\n"},
        stage=True,
    ),
    "missing": RepoSpec(kind="missing"),
    "plain": RepoSpec(kind="plain", files={"system/persona.md": "not in git\n"}),
    "unborn": RepoSpec(kind="unborn", files={"system/persona.md": "staged, never committed\n"}),
    "dollar": RepoSpec(files={"system/dollar.md": "cost: $& $$ $` $' $1 $<x>\n"}),
    # ls-tree prints "notes/x y.md " unquoted; trimmed it names no file, so `git show` fails and it is skipped.
    "space_name_missing": RepoSpec(files={"notes/x y.md ": "hi\n", "system/a.md": "a\n"}),
}


@dataclass(frozen=True)
class CompileCase:
    repo: str
    release: str = "0.32.18"
    system: str = SYSTEM
    include_memfs: bool = True
    previous_message_count: int = 0


CASES: dict[str, CompileCase] = {
    "small": CompileCase("small"),
    "small_dirty": CompileCase("small_dirty"),
    "small_staged": CompileCase("small_staged"),
    "missing": CompileCase("missing"),
    "plain": CompileCase("plain"),
    "unborn": CompileCase("unborn"),
    "small_no_memfs": CompileCase("small", include_memfs=False),
    "dollar": CompileCase("dollar", system="A{CORE_MEMORY}B"),
    "append_after_trim_end": CompileCase(
        "missing", system="No variable\u0085\u3000 \n\t\ufeff", previous_message_count=7
    ),
    "append_dollar": CompileCase("dollar", system="prefix $ text  \n"),
    "two_variables": CompileCase("missing", system="{CORE_MEMORY}|{CORE_MEMORY}"),
    "space_name_missing": CompileCase("space_name_missing"),
    "small_0.25.3": CompileCase("small", release="0.25.3"),
    "small_no_memfs_0.25.3": CompileCase("small", release="0.25.3", include_memfs=False),
    "small_0.25.9": CompileCase("small", release="0.25.9"),
    "small_no_memfs_0.25.9": CompileCase("small", release="0.25.9", include_memfs=False),
}


def build(spec: RepoSpec, root: Path, env: dict[str, str]) -> Path:
    """Make the repository under `root`; return the memory directory to compile."""
    memory = root / "memory"
    if spec.kind == "missing":
        return memory
    memory.mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=memory, env=env, check=True, capture_output=True)

    def write(files: dict[str, str | None]) -> None:
        for name, text in files.items():
            target = memory / name
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))

    if spec.kind != "plain":
        git("init", "-q", "--initial-branch=main")
    write(dict(spec.files))
    if spec.kind == "unborn":
        git("add", "-A")
    if spec.kind == "git":
        git("add", "-A")
        git("commit", "-q", "-m", "memory")
        write(spec.noise)
        if spec.stage:
            git("add", "-A")
    return memory
