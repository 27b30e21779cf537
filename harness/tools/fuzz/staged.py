"""Hypothesis strategies for op cases of `validate`: a committed repository and a staged change on top of HEAD.

Owns what `conformance fuzz --op validate` draws (harness.tools.fuzz.ops runs it). A drawn document is an op
case's `repo`, `op` and `args` (docs/cases.md, "Op cases"; docs/protocol.md, `validate`): upstream's pre-commit
hook judges the index against HEAD, so what varies is what its rules read (cases/rules.yaml, `commit-hook-*`
and `commit-tree-constraints`):

- a legacy tree or a v2 tree (one case in two each), and the layout policy file (`repo.layout_policy`): none,
  `legacy-only`, `root-marker`, `shared-memory`, and near misses (a CR, empty), which pick the legacy checks or the
  v2 ones (0.31.12+), mostly the ones that fit the tree;
- a legacy tree (`.md` files under system/ and reference/, `memory/`-prefixed too, and elsewhere, flat skill
  files) or a v2 tree (a root MEMORY.md, perhaps missing or with frontmatter, directory indexes, some missing,
  depth past 2);
- frontmatter that hits the rules: missing or unclosed, unknown keys, empty, missing and `""` descriptions and
  names, `read_only` spelled true/"true"/True/false (in HEAD too), values with colons, tabs and backslashes,
  indented keys and continuation lines, duplicate keys, lines that are echo's options; LF, CRLF and BOM spellings;
- names with spaces, tabs, newlines, glob characters and non-ASCII (the hook splits and globs `$(git diff ...)`);
- the staged change: adds, edits (of the body only, so a read-only file's lock is what decides), read_only set,
  changed and removed, deletions, renames (git's diff reports them unless `diff.renames` is off), mode changes
  (executable, symlinks) and files past the 20000-character limit; all staged, or only some paths.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness.tools.fuzz.noise import conflicts, noise, stagings
from harness.tools.fuzz.views import directories_of

INDEX = "MEMORY.md"
# the layout policy file of a v2 tree (mostly root-marker: v2 checks once MEMORY.md is there) and of a legacy tree
# (mostly none: legacy checks; shared-memory gives it the v2 checks); near misses are no policy (a CR, empty)
V2_POLICIES = (*("root-marker\n",) * 3, "shared-memory\n", "root-marker\r\n", None, "legacy-only\n")
LEGACY_POLICIES = (None, None, "legacy-only\n", "root-marker\n", "shared-memory\n", "")
LEGACY_DIRS = ("system", "system", "reference", "memory/system", "memory/reference", "system/deep", "notes", "")
V2_DIRS = ("", "", "p", "p/q", "p/q/r", "p/q/r", "x y", "skills", "system")
STEMS = ("a", "b", "human", "x y", "tab\tname", "new\nline", "star*", "q?", "café", "-n", "SKILL", "MEMORY")
EXTENSIONS = (".md", ".md", ".md", ".md", ".MD", ".txt")

LEGACY_LINES = (
    "description: d",
    "description: d",
    "description:",
    "description:   ",
    'description: ""',
    "description: a: b: c",
    "description:\tx",
    "description: back\\nslash \\c cut",
    "  description: indented",
    "description: first\n  continued",
    "read_only: true",
    'read_only: "true"',
    "read_only: True",
    "read_only: false",
    "limit: 3",
    "title: unknown",
    "desc ription: spaced key",
    "name: n",
    "no colon here",
    "-n",
    "",
)
V2_LINES = (
    "name: n",
    "name: n",
    "description: d",
    "description: d",
    "name:",
    'name: ""',
    "name: ''",
    "description:",
    'description: ""',
    "name: a: b",
    "  name: indented",
    "description: first\n  continued",
    "read_only: true",
    "title: x",
    " name : spaced",
    "-e",
    "",
)
BODIES = ("body\n", "", "line one\nline two\n", "no newline")
INDEX_TEXTS = ("# Memory\n", "", "---\ndescription: index\n---\nbody\n", "---\n")
FORMS = ("lf", "lf", "lf", "lf", "crlf", "bom")
# a legacy file's read_only line in HEAD: the lock (bare `true` only), the spellings that do not lock, or none
LOCKS = ("", "read_only: true", "read_only: true", 'read_only: "true"', "read_only: True", "read_only: false")
SYMLINK_TARGETS = ("a.md", "../outside.md", "system")


@st.composite
def frontmatter_texts(draw: st.DrawFn, v2: bool) -> str:
    """A memory file: no frontmatter, closed or unclosed frontmatter of drawn lines (mostly of its layout's keys)."""
    kind = draw(st.integers(0, 9))
    if kind == 9:
        return draw(st.sampled_from(("no frontmatter\n", "", "--- \ndescription: d\n---\n", "----\n---\n")))
    own = V2_LINES if v2 else LEGACY_LINES
    pool = draw(st.sampled_from((own, own, own, V2_LINES + LEGACY_LINES)))
    lines = draw(st.lists(st.sampled_from(pool), min_size=0 if kind else 1, max_size=4))
    closing = "" if kind == 8 else "---\n"
    return "---\n" + "".join(line + "\n" for line in lines) + closing + draw(st.sampled_from(BODIES))


def rendered(text: str, form: str) -> str | dict[str, Any]:
    """A case's file content: the text as it is, with CRLF line ends, or after a UTF-8 BOM."""
    if form == "crlf":
        return {"text": text, "newlines": "crlf"}
    if form == "bom":
        return {"text": text, "bom": True}
    return text


def path_strategy(directories: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda directory, stem, ext: f"{directory}/{stem}{ext}" if directory else f"{stem}{ext}",
        st.sampled_from(directories),
        st.sampled_from(STEMS),
        st.sampled_from(EXTENSIONS),
    )


@st.composite
def committed_trees(draw: st.DrawFn, v2: bool) -> dict[str, tuple[str, str]]:
    """Path -> (text, form) of HEAD: files of the layout's directories, and for v2 the root and directory indexes
    (each sometimes missing)."""
    paths = draw(st.lists(path_strategy(V2_DIRS if v2 else LEGACY_DIRS), min_size=1, max_size=4, unique=True))
    tree = {path: (draw(frontmatter_texts(v2)), draw(st.sampled_from(FORMS))) for path in paths}
    for path, (text, form) in tree.items():
        lock = draw(st.sampled_from(LOCKS))
        if lock and text.startswith("---\n"):
            tree[path] = ("---\n" + lock + text[3:], form)
    if v2:
        if draw(st.integers(0, 5)) != 3:
            tree[INDEX] = (draw(st.sampled_from(INDEX_TEXTS)), "lf")
        for directory in directories_of(tree):
            if draw(st.integers(0, 4)):
                tree[f"{directory}/{INDEX}"] = (draw(st.sampled_from(INDEX_TEXTS)), "lf")
    for clash in conflicts(set(tree)):
        del tree[clash]
    return tree or {"system/a.md": ("---\ndescription: d\n---\n", "lf")}


READ_ONLY_EDITS = (
    ("read_only: true", "read_only: false"),
    ("read_only: true", ""),
    ("read_only: false", "read_only: true"),
    ("read_only: false", ""),
    ('read_only: "true"', "read_only: true"),
    ("description: d", "description: d\nread_only: true"),
)


def _edited(draw: st.DrawFn, kind: str, text: str, v2: bool) -> str:
    """A committed file's new text: its body edited (frontmatter kept), read_only touched, or another text."""
    if kind == "body":
        return text + "edited\n"
    if kind == "read_only":
        old, new = draw(st.sampled_from(READ_ONLY_EDITS))
        return text.replace(old, new, 1) if old in text else text.replace("---\n", f"---\n{new}\n", 1)
    return draw(frontmatter_texts(v2))


@st.composite
def staged_changes(draw: st.DrawFn, tree: dict[str, tuple[str, str]], v2: bool) -> dict[str, Any]:
    """The `worktree` of a validate case: changes of HEAD's files and new files, staged (all or some paths)."""
    files: dict[str, Any] = {}
    delete: list[str] = []
    kinds = ("body", "body", "body", "read_only", "read_only", "text", "delete", "rename", "mode", "symlink")
    for path in draw(st.lists(st.sampled_from(sorted(tree)), max_size=3, unique=True)):
        text, form = tree[path]
        kind = draw(st.sampled_from(kinds))
        if kind == "delete":
            delete.append(path)
        elif kind == "rename":  # git pairs the deletion with the addition of the same (or a close) text
            target = draw(path_strategy(V2_DIRS if v2 else LEGACY_DIRS))
            if target in tree or target in files or conflicts({*tree, *files, target}):
                continue
            delete.append(path)
            files[target] = rendered(text + draw(st.sampled_from(("", "edited\n"))), form)
        elif kind == "mode":
            content = rendered(text, form)
            files[path] = {**(content if isinstance(content, dict) else {"text": content}), "executable": True}
        elif kind == "symlink":
            files[path] = {"symlink": draw(st.sampled_from(SYMLINK_TARGETS))}
        else:
            files[path] = rendered(_edited(draw, kind, text, v2), draw(st.sampled_from((form, *FORMS))))
    for path in draw(st.lists(path_strategy(V2_DIRS if v2 else LEGACY_DIRS), max_size=3, unique=True)):
        if path not in tree and not conflicts({*tree, *files, path}):
            files[path] = rendered(draw(frontmatter_texts(v2)), draw(st.sampled_from(FORMS)))
    extra = draw(st.integers(0, 9))
    if extra == 7 and v2:  # past the 20000-character limit (code points: an emoji is one, two UTF-16 units)
        big = draw(st.sampled_from(({"text": "x", "repeat": 20001}, {"text": "😀", "repeat": 10001})))
        files[draw(st.sampled_from(("big.md", "p/big.md")))] = big
    elif extra == 8:  # the root index added, removed or given frontmatter
        if INDEX in tree and draw(st.booleans()):
            delete.append(INDEX)
        else:
            files[INDEX] = draw(st.sampled_from(INDEX_TEXTS))
    elif extra == 6:  # a flat skill file (refused: skills are folders)
        files[draw(st.sampled_from(("skills/flat.md", "memory/skills/flat.md", "skills/s/SKILL.md")))] = "x\n"
    for clash in conflicts({*tree, *files} - set(delete)) & set(files):
        del files[clash]
    delete = [p for p in dict.fromkeys(delete) if p not in files]
    return noise(files, delete, stagings(draw, [*files, *delete], partial=True))


@st.composite
def validate_documents(draw: st.DrawFn) -> dict[str, Any]:
    """An op case of validate without id and description: `repo` (one commit, the staged change, perhaps the
    layout policy and git config), `op`."""
    v2 = draw(st.booleans())
    policy = draw(st.sampled_from(V2_POLICIES if v2 else LEGACY_POLICIES))
    tree = draw(committed_trees(v2))
    repo: dict[str, Any] = {"commits": [{"files": {path: rendered(*tree[path]) for path in sorted(tree)}}]}
    worktree = draw(staged_changes(tree, v2))
    if worktree:
        repo["worktree"] = worktree
    if policy is not None:
        repo["layout_policy"] = policy
    config = draw(st.sampled_from(({}, {}, {}, {"core.quotePath": False}, {"diff.renames": False})))
    if config:
        repo["config"] = config
    return {"repo": repo, "op": "validate"}
