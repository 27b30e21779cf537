"""Hypothesis strategies for repository shapes `conformance fuzz` builds (issue 17's second family).

The memory directory need not be a plain work tree on the default branch: it can be a bare
repository, a work tree's `.git` directory or a work tree with a separate git directory, use the
SHA-256 object format, hold gitlinks (submodule entries) whose commit is or is not in the
repository, have a HEAD that holds an annotated tag, a tag of a tag or a tree, and carry its own
configuration that changes what `git ls-tree` and `git show` print. `repo_shapes` draws a RepoShape
(docs/cases.md, `repo.layout` and friends); `gitlinked` adds gitlinks to a model's commits. Only
configuration a case may set (harness.cases.checks) is drawn, so every example can be saved as a case.
"""

from __future__ import annotations

from hypothesis import strategies as st

from harness.core.repomodel import MODE_GITLINK, Blob, CommitModel, RepoModel, RepoShape
from harness.repo.shape import HEADS, LAYOUTS

# Repository-local settings that change what upstream's git commands print (for blobs, trees,
# commits and tags), each with the values worth trying.
CONFIG_CHOICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core.quotePath", ("false", "true")),
    ("color.ui", ("always", "never", "auto")),
    ("log.decorate", ("full", "short", "no")),
    ("format.pretty", ("fuller", "oneline", "raw", "format:%H%n%s")),
    ("i18n.logOutputEncoding", ("ISO-8859-1", "UTF-8")),
    ("core.bare", ("true", "false")),
)
GITLINK_NAMES = (b"sub.md", b"system/sub.md", b"notes/linked.md", b"skills/x/SKILL.md", b"MEMORY.md", b"linked")


@st.composite
def repo_shapes(draw: st.DrawFn) -> RepoShape:
    """A layout, object format, HEAD and own configuration; the default shape a third of the time."""
    if not draw(st.sampled_from((True, True, False))):
        return RepoShape()
    config = draw(st.lists(st.sampled_from(CONFIG_CHOICES), max_size=3, unique_by=lambda choice: choice[0]))
    return RepoShape(
        layout=draw(st.sampled_from(LAYOUTS)),
        object_format=draw(st.sampled_from(("sha1", "sha256"))),
        head=draw(st.sampled_from(HEADS)),
        config=tuple((key, draw(st.sampled_from(values))) for key, values in config),
    )


@st.composite
def gitlinked(draw: st.DrawFn, model: RepoModel) -> RepoModel:
    """`model` with gitlinks added to its last commit: to an earlier commit of its own (present) or to a
    commit id the repository does not have (missing), under names upstream would read or list."""
    if not model.commits or not draw(st.sampled_from((False, False, True))):
        return model
    hex_digits = 64 if model.shape.object_format == "sha256" else 40
    last = model.commits[-1]
    files = dict(last.files)
    for name in draw(st.lists(st.sampled_from(GITLINK_NAMES), min_size=1, max_size=2, unique=True)):
        if any(existing.startswith(name + b"/") or name.startswith(existing + b"/") for existing in files):
            continue  # a name cannot be a file and a directory in one tree
        earlier = len(model.commits) - 1
        if earlier and draw(st.booleans()):
            files[name] = Blob(MODE_GITLINK, f"commit:{draw(st.integers(1, earlier))}".encode())
        else:
            files[name] = Blob(MODE_GITLINK, draw(st.sampled_from(("1", "e", "0"))).encode() * hex_digits)
    commits = [*model.commits[:-1], CommitModel(files, last.message, last.author, last.committer)]
    return RepoModel(commits, model.kind, model.memory_subdir, model.worktree, model.shape)
