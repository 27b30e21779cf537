"""Hypothesis strategies for op cases of `memory_view`: memory trees, their histories, a dirty work tree, a path.

Owns what `conformance fuzz --op memory_view` draws (harness.tools.fuzz.ops runs it). A drawn document is an op
case's `repo`, `op` and `args` (docs/cases.md, "Op cases"):

- a memory tree: a root MEMORY.md (missing in one tree in twenty-five: the tool refuses), nested directories
  (names with XML specials, quotes, spaces, non-ASCII, combining marks, hidden and reserved names), each with or
  without a MEMORY.md index whose first paragraph the tool shows as the directory's description (after
  headings, lists, tables, fences and HTML it skips; links it unwraps; soft breaks; text past 300 units; a
  frontmatter description that wins), files with and without frontmatter descriptions, and in one tree in four
  a directory of more than ten entries (the tool lists ten);
- one to four commits with distinct committer times, in or out of order, each adding, editing, deleting or
  renaming files (the tool dates an entry by the first commit `git log` lists touching it);
- a work-tree state: edited, untracked (some not UTF-8, some symlinks), deleted files, all staged or not, and
  pinned mtimes (the tool raises an uncommitted entry's time to its files' mtimes), some on unchanged files;
- `path`: an existing directory (most often), an existing file, a spelling the tool normalises (`./d`, `d/`,
  padding, backslashes) or one it refuses (the root, absolute, `..`, hidden, `skills/`, root files, missing
  paths with and without a hint).

Times are seconds on a minute grid from 2026-01-01T00:00:00Z, the date the builder gives undated work-tree files,
so that every build is the same bytes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness.tools.fuzz.noise import conflicts, noise, stagings, worktree_changes

BASE = 1767225600  # 2026-01-01T00:00:00Z: undated work-tree files get this time (harness.repo.build)
INDEX = "MEMORY.md"

DIR_NAMES = (
    "projects",
    "notes",
    "Archive",
    "archive",
    "deep",
    "z",
    "Zeta",
    "10",
    "9",
    "a&b",
    "x<y>",
    'say "hi"',
    "it's",
    "x y",
    "café",
    "cafe\u0301",
    "日记",
    "emoji😀",
    "tab\tname",
    "back\\slash",
    "-dash",
    "_under",
    ".hidden",
    "skills",
    "memory",
)
FILE_STEMS = (
    "alpha",
    "Beta",
    "beta",
    "zeta",
    "10",
    "9",
    "a&b",
    "x<y>",
    'q"t',
    "it's",
    "a b",
    "café",
    "Café",
    "e\u0301",
    "日本",
    "😀",
    "-d",
    "_u",
    ".hidden",
    "MEMORY",
    "memory",
    "trail ",
)
EXTENSIONS = (".md", ".md", ".md", ".md", ".md", ".txt", "", ".MD", ".md.bak")

# blocks the tool's first-paragraph reader skips (`#`, list items, tables, fences, HTML), and near misses it keeps
SKIPPED = (
    "# Heading",
    "## Sub heading\nwith a second line",
    "- item\n- item two",
    "* star item",
    "+ plus item",
    "1. first\n2. second",
    "10. ten",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "```\ncode block\n```",
    "```js\nlet x = 1\n```",
    "<div>html</div>",
    "<!-- comment -->",
)
PARAGRAPHS = (
    "Plain paragraph.",
    "Line one\nline two\n  line three",
    "See [the docs](https://x.test/a) and [b](c).",
    "[broken](link and [ok](x)",
    "text with <b>bold</b> & \"quotes\" and 'apostrophes'",
    "#hashtag without a space",
    "-not a list item",
    "1.5 is a number",
    "\u00a0non-breaking lead and trail\u00a0",
    "next\u2028line separator",
    "a\u0085next line",
    "word " * 70,
    "Ünïcödé 😀 " * 30,
    "x" * 296 + "😀😀",
    "x" * 300,
)
SEPARATORS = ("\n\n", "\n  \n", "\n\t\n", "\r\n\r\n", "\n\n\n")
DESCRIPTIONS = (
    "description: Plain words",
    "description: '<a & \"b\">'",
    'description: "quoted: yes"',
    "description: |\n  block\n  scalar",
    "description: 42",
    "description: ''",
    "description:   ",
    "title: no description here",
    "description: " + "long " * 80,
)
BODIES = ("body\n", "", "line\n" * 3, "no newline", "x" * 2100 + "\n", "l\n" * 2050, "a\0b\n", "  \n\n")


def frontmatter(description: str) -> str:
    return f"---\n{description}\n---\n"


@st.composite
def index_texts(draw: st.DrawFn) -> str:
    """A MEMORY.md: perhaps frontmatter, skipped blocks, the first plain paragraph (or none), more blocks."""
    head = draw(st.sampled_from(("", "", "", *map(frontmatter, DESCRIPTIONS), "\ufeff---\ndescription: bom\n---\n")))
    blocks = draw(st.lists(st.sampled_from(SKIPPED), max_size=3))
    if draw(st.integers(0, 5)):
        blocks.append(draw(st.sampled_from(PARAGRAPHS)))
    blocks += draw(st.lists(st.sampled_from((*SKIPPED, *PARAGRAPHS)), max_size=2))
    if draw(st.integers(0, 19)) == 11:  # past the tool's budgets: a 2,500-character line, 2,001 lines
        blocks.append(draw(st.sampled_from(("long line " * 250, "row\n" * 2001))))
    text = draw(st.sampled_from(SEPARATORS)).join(blocks)
    return head + draw(st.sampled_from(("", "\n", "   ", "\n\n"))) + text + "\n"


@st.composite
def file_texts(draw: st.DrawFn) -> str:
    """A memory file: with or without a frontmatter description (odd ones too), and a body."""
    head = draw(st.sampled_from(("", "", *map(frontmatter, DESCRIPTIONS), "---\r\ndescription: crlf\r\n---\r\n")))
    body = draw(st.sampled_from(BODIES if draw(st.integers(0, 9)) == 7 else BODIES[:4]))
    return head + body


file_names = st.builds(lambda stem, ext: stem + ext, st.sampled_from(FILE_STEMS), st.sampled_from(EXTENSIONS))


def directories_of(paths: set[str] | dict[str, Any]) -> list[str]:
    """Every directory holding one of `paths`, sorted."""
    found = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
    return sorted(found)


@st.composite
def memory_trees(draw: st.DrawFn) -> dict[str, str]:
    """Path -> text of a memory directory: the root index, nested directories with indexes and files."""
    tops = draw(
        st.lists(
            st.lists(st.sampled_from(DIR_NAMES), min_size=1, max_size=3).map("/".join),
            min_size=1,
            max_size=5,
            unique=True,
        )
    )
    tree: dict[str, str] = {}
    if draw(st.integers(0, 24)) != 13:  # not 0: Hypothesis draws its small values far more often than 1 in 25
        tree[INDEX] = draw(index_texts())
    for name in draw(st.lists(file_names, max_size=2, unique=True)):
        tree[name] = draw(file_texts())  # root files: the tool refuses them as root core memory
    for directory in directories_of({f"{top}/x" for top in tops}):
        if draw(st.integers(0, 2)):
            tree[f"{directory}/{INDEX}"] = draw(index_texts())
        for name in draw(st.lists(file_names, max_size=6, unique=True)):
            tree[f"{directory}/{name}"] = draw(file_texts())
    if not draw(st.integers(0, 3)):  # more entries than the ten the tool lists
        crowded = draw(st.sampled_from(directories_of({f"{top}/x" for top in tops})))
        for number in range(draw(st.sampled_from((11, 10, 12, 9, 15)))):
            leaf = f"n{number:02}.md" if number % 3 else f"sub{number}/{INDEX}"
            tree[f"{crowded}/{leaf}"] = f"---\ndescription: entry {number}\n---\nnote {number}\n"
    for clash in conflicts(set(tree)):
        del tree[clash]
    return tree or {"notes/a.md": "a\n"}


def ident(seconds: int) -> str:
    return f"Conformance <conformance@example.com> {seconds} +0000"


@st.composite
def histories(draw: st.DrawFn, tree: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Commits that build `tree` over one to four commits with distinct times (in or out of order), later ones
    editing, deleting and renaming earlier files; and the tree the last one leaves."""
    count = draw(st.integers(1, 4))
    minutes = draw(st.lists(st.integers(-10, 240), min_size=count, max_size=count, unique=True))
    changes: list[dict[str, Any]] = [{} for _ in range(count)]
    added_at = {path: 0 if path == INDEX else draw(st.integers(0, count - 1)) for path in sorted(tree)}
    for path, at in added_at.items():
        changes[at].setdefault("files", {})[path] = tree[path]
    state = dict(tree)
    for at in range(1, count):
        earlier = sorted(p for p, when in added_at.items() if when < at and p in state)
        for path in draw(st.lists(st.sampled_from(earlier), max_size=2, unique=True)) if earlier else []:
            kind = draw(st.sampled_from(("edit", "edit", "delete", "rename")))
            if kind == "edit" or path == INDEX:  # the root index stays (without it the tool refuses everything)
                state[path] = state[path] + f"edit {at}\n"
                changes[at].setdefault("files", {})[path] = state[path]
            elif kind == "delete":
                del state[path]
                changes[at].setdefault("delete", []).append(path)
            else:
                target = f"{path.rsplit('/', 1)[0]}/moved{at}.md" if "/" in path else f"moved{at}.md"
                if target in state or conflicts({*state, target}):
                    continue
                state[target] = state.pop(path)
                changes[at].setdefault("rename", {})[path] = target
        if not changes[at]:  # a commit changes something
            path = draw(st.sampled_from(sorted(state))) if state else f"touched{at}.md"
            state[path] = state.get(path, "") + f"touch {at}\n"
            changes[at]["files"] = {path: state[path]}
    commits = []
    for at, change in enumerate(changes):
        when = ident(BASE + 60 * minutes[at])
        commits.append({"committer": when, "author": when, **change})
    return commits, state


@st.composite
def worktrees(draw: st.DrawFn, committed: dict[str, str]) -> dict[str, Any]:
    """Uncommitted changes of `committed`: edits, untracked files (in new directories too), deletions, perhaps
    all staged, a symlink, and mtimes on changed and unchanged files."""
    homes = [*directories_of(committed), "fresh", "fresh/deeper", "new dir"]

    def new_path(draw: st.DrawFn) -> str:
        return f"{draw(st.sampled_from(homes))}/{draw(file_names)}"

    def new_content(draw: st.DrawFn) -> Any:
        return draw(st.one_of(file_texts(), st.sampled_from(ODD_CONTENTS)))

    def link(draw: st.DrawFn, taken: set[str]) -> tuple[str, Any] | None:
        """A symlink the listing skips, and that `path` may name."""
        if draw(st.integers(0, 5)) != 4:
            return None
        path = f"{draw(st.sampled_from(homes))}/link"
        ok = path not in committed and not conflicts({*taken, path})
        return (path, {"symlink": draw(st.sampled_from(SYMLINK_TARGETS))}) if ok else None

    def edit(draw: st.DrawFn, path: str) -> str:
        return committed[path] + "uncommitted edit\n"

    files, deleted = worktree_changes(draw, committed, edit, (new_path, new_content), (3, 3, 2), {INDEX}, link)
    present = sorted({*committed, *files} - set(deleted))
    present = [p for p in present if not isinstance(files.get(p), dict) or "symlink" not in files[p]]
    dated = [p for p in present if p in files and draw(st.integers(0, 3))]
    dated += draw(st.lists(st.sampled_from(present), max_size=2, unique=True)) if present else []
    worktree = noise(files, deleted, stagings(draw, [*files, *deleted]))
    mtimes = {p: BASE + 60 * draw(st.integers(-10, 300)) + draw(st.sampled_from((0, 0, 0, 0.5))) for p in dated}
    if mtimes:
        worktree["mtimes"] = mtimes
    return worktree


# untracked contents that are not UTF-8 text: Latin-1 and UTF-16 descriptions (read as U+FFFD), a NUL
ODD_CONTENTS = (
    {"base64": "LS0tCmRlc2NyaXB0aW9uOiBjYWbpCi0tLQpib2R5Cg=="},  # ---\ndescription: caf\xe9\n---\nbody\n
    {"base64": "//4tAC0ALQAKAA=="},  # UTF-16LE with its BOM
    {"base64": "AA=="},  # one NUL
)
SYMLINK_TARGETS = ("../outside", "/etc", "..", ".", "missing.md", "../MEMORY.md", "../../notes")

REFUSED_PATHS = (
    "",
    "  ",
    ".",
    "./",
    "/",
    "/projects",
    INDEX,
    f"./{INDEX}",
    "..",
    "../memory",
    "projects/../notes",
    ".hidden",
    "projects/.hidden",
    "skills",
    "skills/some-skill",
    "C:\\memory",
    "c:projects",
    "projects//notes",
    "missing",
    "missing.md",
    "projects/nope",
    "alpha.md",
    "beta",
)


@st.composite
def view_paths(draw: st.DrawFn, final: set[str]) -> str:
    """The `path` argument: mostly an existing directory, else a file, a respelling, or a refused path."""
    directories = directories_of(final)
    files = sorted(final)
    kind = draw(st.integers(0, 9))
    if kind < 5 and directories:
        return draw(st.sampled_from(directories))
    if kind < 7 and files:
        return draw(st.sampled_from(files))
    if kind < 8 and directories:
        shown = draw(st.sampled_from(directories))
        return draw(st.sampled_from((f"./{shown}", f"{shown}/", f"{shown}//", f" {shown} ", shown.replace("/", "\\"))))
    if kind < 9 and files:
        missing = draw(st.sampled_from(files))  # a hint: the .md left off, or the basename alone
        return draw(st.sampled_from((missing.removesuffix(".md"), missing.rsplit("/", 1)[-1])))
    return draw(st.sampled_from(REFUSED_PATHS))


def final_tree(committed: dict[str, str], worktree: dict[str, Any]) -> set[str]:
    """The work tree's files after `worktree` is applied to the last commit's."""
    return ({*committed, *worktree.get("files", {})}) - set(worktree.get("delete", ()))


@st.composite
def view_documents(draw: st.DrawFn) -> dict[str, Any]:
    """An op case of memory_view without id and description: `repo` (commits, worktree), `op`, `args`."""
    tree = draw(memory_trees())
    commits, committed = draw(histories(tree))
    worktree = draw(worktrees(committed))
    repo: dict[str, Any] = {"commits": commits}
    if worktree:
        repo["worktree"] = worktree
    if draw(st.integers(0, 4)) == 3:
        repo["config"] = {"core.quotePath": False}  # git log prints non-ASCII names raw: they keep their times
    path = draw(view_paths(final_tree(committed, worktree)))
    return {"repo": repo, "op": "memory_view", "args": {"path": path}}
