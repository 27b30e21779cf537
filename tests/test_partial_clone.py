"""Partial clones whose promisor remote is out of reach: a missing object costs that one file, never the compile.

In a blob-less clone (`git clone --filter=blob:none`) the blobs outside the checkout are promised, not
present; with the remote gone, `git cat-file` exits at the first one it is asked for, while upstream's
`git show HEAD:<path>` fails for that file alone, which upstream catches (the file is left out). In a
tree-less clone (`--filter=tree:0`) even HEAD's tree is promised: `git ls-tree -r HEAD` fails, upstream
lists nothing, and the revision is still HEAD's. The repositories are built with git itself over file://,
as a user gets them; the expected values are upstream's own git commands and, for `integration`, the
release bundles' compile.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_git_show_paths import port_view, upstream_view

from memfs_prompt import compile_system_prompt
from memfs_prompt.cli import parse_now
from memfs_prompt.compiler import CompiledPrompt
from memfs_prompt.profiles import profile_for_release

V1 = {
    "system/persona.md": "---\ndescription: who I am\n---\nI am a helpful agent.\n",
    "system/human/prefs.md": "---\ndescription: the user\n---\nAna likes teal.\n",
    "notes/a.md": "---\ndescription: notes\n---\nA note.\n",
    "README.md": "root readme\n",
}
V2 = {
    "MEMORY.md": "# Memory\n",
    "human.md": "---\ndescription: the user\n---\nAna likes teal.\n",
    "projects/MEMORY.md": "---\ndescription: projects\n---\nProjects index.\n",
    "projects/a.md": "---\ndescription: a project\n---\nProject A.\n",
}


def missing_objects(repo: Path, env: dict[str, str]) -> int:
    listed = subprocess.run(
        ["git", "rev-list", "--objects", "--missing=print", "HEAD"], cwd=repo, env=env, capture_output=True, check=True
    )
    return sum(line.startswith(b"?") for line in listed.stdout.split(b"\n"))


def partial_clones(make_repo, git_env: dict[str, str], tmp_path: Path) -> dict[str, Path]:
    """Blob-less and tree-less clones of local bare repositories, whose origins are then moved away.

    `blobless-sparse`: a sparse checkout (root files only), one `system/` blob fetched while the origin was
    there; `treeless`: no checkout, no tree; `blobless-v2`: memfs-v2, only the root MEMORY.md fetched.
    """

    def git(*args: str, cwd: Path = tmp_path) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=git_env, check=True, capture_output=True)

    clones = {}
    for name, files in (("v1", V1), ("v2", V2)):
        src = make_repo(files, name=f"src-{name}")
        git("clone", "-q", "--bare", str(src.path), f"origin-{name}.git")
        git("config", "uploadpack.allowFilter", "true", cwd=tmp_path / f"origin-{name}.git")
    url = (tmp_path / "origin-v1.git").as_uri()
    git("clone", "-q", "--filter=blob:none", "--sparse", url, "blobless-sparse")
    git("cat-file", "-p", "HEAD:system/persona.md", cwd=tmp_path / "blobless-sparse")  # fetched, the rest not
    git("clone", "-q", "--filter=tree:0", "--no-checkout", url, "treeless")
    git("clone", "-q", "--filter=blob:none", "--no-checkout", (tmp_path / "origin-v2.git").as_uri(), "blobless-v2")
    git("cat-file", "-p", "HEAD:MEMORY.md", cwd=tmp_path / "blobless-v2")
    for name in ("v1", "v2"):  # the promisor remote is out of reach from now on
        shutil.move(tmp_path / f"origin-{name}.git", tmp_path / f"gone-{name}.git")
    for clone in ("blobless-sparse", "treeless", "blobless-v2"):
        clones[clone] = tmp_path / clone
    return clones


def test_a_partial_clone_reads_as_upstream_s_git_commands(make_repo, git_env, tmp_path: Path) -> None:
    for name, memory_dir in partial_clones(make_repo, git_env, tmp_path).items():
        assert missing_objects(memory_dir, git_env) >= 1, name  # promised objects git cannot fetch
        port, upstream = port_view(memory_dir, git_env), upstream_view(memory_dir, git_env)
        assert port == upstream, name
        assert port[0] is not None, name  # HEAD's revision, even where its tree is out of reach


def compile_default(memory_dir: Path, git_env: dict[str, str]) -> CompiledPrompt:
    return compile_system_prompt(
        memory_dir,
        system="{CORE_MEMORY}",
        agent_id="agent-1",
        conversation_id="c-1",
        now=parse_now("2026-01-02T03:04:05.678Z"),
        profile=profile_for_release("0.34.12"),
        git_env=git_env,
    )


def test_only_the_unreadable_files_drop_out_of_the_memory(make_repo, git_env, tmp_path: Path) -> None:
    clones = partial_clones(make_repo, git_env, tmp_path)
    record = compile_default(clones["blobless-sparse"], git_env)
    assert "I am a helpful agent." in record.core_memory  # fetched before the remote went away
    assert "Ana likes teal." not in record.core_memory and "notes/a.md" not in record.core_memory
    assert "README.md" in record.core_memory  # checked out: present
    treeless = compile_default(clones["treeless"], git_env)
    assert treeless.memfs_revision is not None and "<memory>" not in treeless.core_memory


@pytest.mark.integration
@pytest.mark.parametrize("release", ["0.25.3", "0.30.28", "pypi:0.34.12"])
def test_a_partial_clone_compiles_as_the_release_does(
    release: str, make_repo, git_env, tmp_path: Path, reference_bun, release_bundle
) -> None:
    from upstream_oracle import reference_compile

    clones = partial_clones(make_repo, git_env, tmp_path)
    request = {
        "system": "You are a helpful agent.\n\n{CORE_MEMORY}",
        "agentId": "agent-1",
        "conversationId": "c-1",
        "now": "2026-01-02T03:04:05.678Z",
        "previousMessageCount": 0,
        "includeMemfs": True,
    }
    requests = [{"memoryDir": str(path), **request} for path in clones.values()]
    answers = reference_compile(reference_bun, release_bundle(release), requests, git_env)
    profile = profile_for_release(release.removeprefix("pypi:"))
    for (name, path), answer in zip(clones.items(), answers, strict=True):
        port = compile_system_prompt(
            path,
            system=request["system"],
            agent_id="agent-1",
            conversation_id="c-1",
            now=parse_now(request["now"]),
            profile=profile,
            git_env=git_env,
        )
        assert answer["ok"] and answer["record"] == port.to_json(), name
