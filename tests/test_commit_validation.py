"""The pre-commit hook's v2 listing (memfs_prompt.commit_validation): bash's quoted `git ls-files '*.md'` until
0.34.0, node's unquoted `git ls-files -z` from 0.34.1 (`Profile.commit_hook`, docs/profiles.md). The corpus's
cases/ops/validate-v2-non-ascii-* compare these answers with the releases; this pins the port's split."""

from __future__ import annotations

from collections.abc import Callable

from conftest import GitRepo

from memfs_prompt.commit_validation import COULD_NOT_READ, validate_staged
from memfs_prompt.profiles import resolve_profile

V2_ROOT = {"MEMORY.md": "# Memory\n", "base.md": "---\nname: base\ndescription: base\n---\nbase\n"}


def staged(make_repo: Callable[..., GitRepo], files: dict[str, str]) -> GitRepo:
    """A v2 root committed, `files` staged on top."""
    repo = make_repo(V2_ROOT)
    for name, text in files.items():
        repo.write(name, text)
    repo.git("add", "-A")
    return repo


def test_a_quoted_name_in_a_directory_is_skipped_until_0_34_0_and_checked_from_0_34_1(
    make_repo: Callable[..., GitRepo],
) -> None:
    repo = staged(make_repo, {"system/MEMORY.md": "# System\n", "system/café.md": "no frontmatter\n"})
    assert validate_staged(repo.path, resolve_profile("0.34.0"), repo.env, "root-marker").accepted
    refused = validate_staged(repo.path, resolve_profile("0.34.1"), repo.env, "root-marker")
    assert not refused.accepted
    assert refused.messages[-1] == "  system/café.md: missing frontmatter (must start with ---)"


def test_a_quoted_root_file_cannot_be_read_until_0_34_0_and_is_accepted_from_0_34_1(
    make_repo: Callable[..., GitRepo],
) -> None:
    repo = staged(make_repo, {"笔记.md": "---\nname: notes\ndescription: notes\n---\nnotes\n"})
    before = validate_staged(repo.path, resolve_profile("0.33.6"), repo.env, "root-marker")
    assert (before.accepted, before.messages) == (False, (COULD_NOT_READ,))
    assert validate_staged(repo.path, resolve_profile("0.34.6"), repo.env, "root-marker").accepted
