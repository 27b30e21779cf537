"""Upstream's `ensureLocalMemoryRepo` (`initializeLocalMemoryRepo`), as far as what the model receives depends on it.

The local backend runs it before every compile of a conversation's prompt (a new conversation, a turn's
full or dry-run compile, a recompile, a compaction): a memory directory without `.git` is `git init`-ed with
HEAD on `refs/heads/main`, and when HEAD names no commit (`git rev-parse --verify HEAD` fails: an unborn
branch, an empty HEAD file) it commits the index as it is, `git commit --allow-empty -m "chore: initialize
empty local memory"`, by the agent (`user.name` its name, trimmed, or `Letta Agent`; `user.email`
`<agent id>@letta.com`). A git command that fails throws, and so does the compile (UpstreamError).

Upstream installs its pre-commit hook (with the layout policy of `Profile.local_hook_policy`) before that commit,
so the commit can be refused (a staged system/ file without frontmatter; from 0.33.3 a v2 root file without
`name`): the port checks the index with memfs_prompt.commit_validation under the policy upstream would have
written and fails the same way, `Command failed` with the hook's lines. What the port leaves out: it writes no
hook files, no policy file, and not the author and `letta.agentId` upstream writes into the repository's config
(no compiled byte reads them; the port only fails where making the hooks directory fails: a `.git` that is a
file).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .commit_validation import validate_staged
from .errors import UpstreamError
from .git_command import run_git
from .git_head import committed_revision
from .profiles import DEFAULT, Profile

INITIAL_COMMIT_MESSAGE = "chore: initialize empty local memory"
DEFAULT_AUTHOR_NAME = "Letta Agent"  # when the agent has no name


def ensure_memory_repo(
    memory_dir: Path, agent_id: str, agent_name: str | None, env: Mapping[str, str] | None, profile: Profile = DEFAULT
) -> None:
    """`initializeLocalMemoryRepo({memoryDir, agentId, authorName, files: []})`."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    if not (memory_dir / ".git").exists():
        _git(memory_dir, env, "init")
        _git(memory_dir, env, "symbolic-ref", "HEAD", "refs/heads/main")
    install_hooks(memory_dir)
    if committed_revision(memory_dir, env) is not None:
        return
    name = (agent_name or "").strip() or DEFAULT_AUTHOR_NAME
    args = (
        "-c",
        f"user.name={name}",
        "-c",
        f"user.email={agent_id}@letta.com",
        "commit",
        "--allow-empty",
        "-m",
        INITIAL_COMMIT_MESSAGE,
    )
    validation = validate_staged(memory_dir, profile, env, _installed_policy(memory_dir, profile, env))
    if not validation.accepted:  # git ran the hook, which refused: git's stderr is what the hook printed
        detail = "\n".join(validation.messages).strip()
        raise UpstreamError(f"Error: Command failed: git {' '.join(args)}\n{detail}")
    _git(memory_dir, env, *args)


def _installed_policy(memory_dir: Path, profile: Profile, env: Mapping[str, str] | None) -> str:
    """The layout policy upstream's hook installation has just written (installPreCommitHook: legacy-only;
    0.33.3+ installLocalMemoryPreCommitHook: root-marker when MEMORY.md is in the work tree or HEAD)."""
    if profile.local_hook_policy != "root-marker-if-root":
        return "legacy-only"
    head = run_git(memory_dir, env, "cat-file", "-e", "HEAD:MEMORY.md")
    return "root-marker" if (memory_dir / "MEMORY.md").exists() or head.returncode == 0 else "legacy-only"


def install_hooks(memory_dir: Path) -> None:
    """What installing upstream's pre-commit hook can do to the caller: `installPreCommitHook` (memory-git-hooks.ts)
    runs `mkdirSync(join(dir, ".git", "hooks"), {recursive: true})` when it does not exist, before a memory
    repository's first commit (ensure_memory_repo) and before each commit of the memory write tool
    (`prepareLocalOnlyMemoryRepoForGitOps`, memfs_prompt.memory_write). The port writes no hook (it checks commits
    with memfs_prompt.commit_validation instead), but a `.git` that is a file (a linked work tree,
    `--separate-git-dir`) has no directory to make one in: raises UpstreamError with node's ENOTDIR, as every
    release throws there."""
    git = memory_dir / ".git"
    if not git.is_dir():
        raise UpstreamError(f"Error: ENOTDIR: not a directory, mkdir '{git / 'hooks'}'")


def _git(memory_dir: Path, env: Mapping[str, str] | None, *args: str) -> None:
    """`runGit`: signing off (`-c commit.gpgsign=false`); a failure is upstream's `Command failed`."""
    done = run_git(memory_dir, env, "-c", "commit.gpgsign=false", *args)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()
        raise UpstreamError(f"Error: Command failed: git {' '.join(args)}\n{detail}")
