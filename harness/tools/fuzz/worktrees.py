"""Hypothesis strategies for op cases of `memory_write` on clean and dirty repositories.

Owns what `conformance fuzz --op memory_write` draws (harness.tools.fuzz.ops runs it): a memfs-v1 repository
(system/ and other files with frontmatter, odd names: spaces, quotes, tabs, backslashes, ` -> `, non-ASCII), one
or two commits, and in three cases out of four a dirty work tree. The tool refuses a repository whose
`git status --porcelain` is not empty, and from 0.30.28 its message names each dirty Markdown file that starts
with a UTF-16 byte order mark or holds a NUL, read back from that status: quoted paths, renames (`old -> new`),
deletions, untracked directories (shown as `dir/`) and staged changes are what the strategy varies, with
UTF-16LE/BE, NUL and plain contents. On a clean repository the command runs (and its commit is compared:
`repoAfter`). The commands are simple ones on existing files (docs/protocol.md, `memory_write`).
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

from harness.tools.fuzz.noise import conflicts, noise, stagings, worktree_changes
from harness.tools.fuzz.views import BASE, ident

DIRECTORIES = ("system", "system/deep", "notes", "x y", "café", 'q"t', "tab\tdir", "a -> b")
STEMS = ("persona", "human", "a", "Beta", "x y", "a -> b", 'q"t', "tab\tname", "back\\slash", "café", "日本", " lead")
EXTENSIONS = (".md", ".md", ".md", ".txt", "")
TEXTS = (
    "---\ndescription: a file\n---\nbody\n",
    "---\ndescription: read only\nread_only: true\n---\nbody\n",
    "no frontmatter\n",
    "",
)
DIRTY = (
    b"\xff\xfe-\x00-\x00-\x00\n\x00",  # UTF-16LE with its BOM
    b"\xfe\xff\x00-\x00-\x00-\x00\n",  # UTF-16BE with its BOM
    b"a\x00b\n",  # a NUL
    b"plain edit\n",
    b"\xff\xfe",  # a BOM alone
    b"\xef\xbb\xbfUTF-8 BOM\n",
)

paths = st.builds(
    lambda directory, stem, ext: f"{directory}/{stem}{ext}" if directory else f"{stem}{ext}",
    st.sampled_from(("", *DIRECTORIES)),
    st.sampled_from(STEMS),
    st.sampled_from(EXTENSIONS),
)


def content(data: bytes) -> str | dict[str, str]:
    """A case's file content: text when it is plain UTF-8 without NUL, else base64."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return (
        text
        if text is not None and "\0" not in text and "\ufeff" not in text
        else {"base64": base64.b64encode(data).decode()}
    )


@st.composite
def dirty_worktrees(draw: st.DrawFn, committed: dict[str, str]) -> dict[str, Any]:
    """Edits, untracked files (in new directories too), deletions and perhaps all staged; or nothing (clean)."""
    if draw(st.integers(0, 3)) == 2:  # clean (not 0: Hypothesis draws small values far more often than 1 in 4)
        return {}

    def dirty(draw: st.DrawFn, path: str = "") -> str | dict[str, str]:
        return content(draw(st.sampled_from(DIRTY)))

    files, deleted = worktree_changes(draw, committed, dirty, (lambda draw: draw(paths), dirty), (2, 2, 1))
    return noise(files, deleted, stagings(draw, [*files, *deleted]))


@st.composite
def write_commands(draw: st.DrawFn, committed: dict[str, str]) -> dict[str, Any]:
    """A command of the tool on an existing file (or a new one, for create)."""
    target = draw(st.sampled_from(sorted(committed)))
    label = target.removesuffix(".md")
    command = draw(st.sampled_from(("delete", "str_replace", "update_description", "create", "insert")))
    args: dict[str, Any] = {"reason": draw(st.sampled_from(("fuzz write", "two\nlines")))}
    if command == "delete":
        args["file_path"] = label
    elif command == "str_replace":
        args |= {"file_path": label, "old_string": "body", "new_string": "BODY"}
    elif command == "update_description":
        args |= {"file_path": label, "description": "new description"}
    elif command == "insert":
        args |= {"file_path": label, "insert_line": 0, "insert_text": "first"}
    else:
        args |= {"file_path": "notes/created", "description": "made", "file_text": "text"}
    return {"command": command, "args": args}


@st.composite
def write_documents(draw: st.DrawFn) -> dict[str, Any]:
    """An op case of memory_write without id and description: `repo` (commits, worktree), `op`, `args`."""
    chosen = draw(st.lists(paths, min_size=1, max_size=4, unique=True))
    committed = {"system/persona.md": TEXTS[0]}
    committed |= {path: draw(st.sampled_from(TEXTS)) for path in chosen}
    for clash in conflicts(set(committed)):
        del committed[clash]
    repo: dict[str, Any] = {"commits": [{"committer": ident(BASE), "author": ident(BASE), "files": committed}]}
    worktree = draw(dirty_worktrees(committed))
    if worktree:
        repo["worktree"] = worktree
    if draw(st.integers(0, 3)) == 1:
        repo["config"] = {"core.quotePath": False}  # non-ASCII names unquoted in `git status --porcelain`
    return {"repo": repo, "op": "memory_write", "args": draw(write_commands(committed))}
