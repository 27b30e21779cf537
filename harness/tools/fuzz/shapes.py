"""Hypothesis strategies for the newer shapes `conformance fuzz` generates: memfs-v2 trees and `client_skills`.

memfs-v2 (0.33.3+): a committed root `MEMORY.md` switches the compiler to root `<label>` blocks plus
`<memory>` with `<deferred-memory>`. `v2_trees` builds such trees: the root index, root files of
every shape, child indexes (`dir/MEMORY.md`) at the first level, nested, and under `skills/`, files
beside them that are only listed, and sometimes a v1 `system/` file. The blobs and name components
come from the caller (harness.tools.fuzz.campaign), so both shapes share one notion of a risky file.

`client_skills_values` is the turn body's `client_skills` (docs/cases.md): lists of skills with
missing, duplicate, non-string and risky names, multi-line and whitespace descriptions, custom and
nested locations, entries that are not objects, and values that are not lists at all; names, descriptions and
locations from Unicode's assigned repertoire (harness.tools.fuzz.repertoire.js_text: lone surrogates and
surrogate pairs included) and odd numbers in any field.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness.core.repomodel import MODE_FILE, Blob
from harness.tools.fuzz.repertoire import js_text

INDEX = b"MEMORY.md"
CHILD_DIRS = (b"projects", b"notes", b"skills", b"people", b"Zeta", b"_under", b"a b", b"caf\xc3\xa9", b"$&")
SKILL_NAMES = ("build", "code-review", "Zeta", "_under", "alpha", "a b", "é", "日本", "$&", "x/y", "build")
# numbers JSON carries but JavaScript reads oddly (-0, past 2^53, past the largest double: Infinity), and
# the ones no JSON text holds (a request with one is refused: harness.cases.inputs.non_finite_at)
ODD_NUMBERS: tuple[int | float, ...] = (0, 7, -0.0, 0.5, 1e21, 2**53 + 1, 10**400, 5e-324, -1)
NON_FINITE = (float("inf"), float("-inf"), float("nan"))


_root_index_default = st.just(Blob(MODE_FILE, b"# Memory\n"))
_counts = st.integers(0, 2)
_pair = st.integers(0, 1)
_root_extensions = st.sampled_from((b".md", b".md", b".md", b".txt", b""))
_child_dirs = st.sampled_from(CHILD_DIRS)
_beside_extensions = st.sampled_from((b".md", b".md", b".MD"))
_one_in_five = st.integers(0, 4)
_one_in_four = st.integers(0, 3)
_depths = st.integers(1, 3)


def v2_trees(blobs: st.SearchStrategy[Blob], names: st.SearchStrategy[bytes]) -> st.SearchStrategy[dict[bytes, Blob]]:
    """memfs-v2 trees (names are not yet checked against each other: the caller's `_tree_of` does that).

    Every sub-strategy is built here, once, not inside a draw (Hypothesis validates each new strategy)."""
    tops = st.one_of(_child_dirs, st.just(b"skills"), names)
    deeper = st.lists(st.one_of(_child_dirs, names), max_size=2)
    leaves = st.one_of(names, st.just(b"SKILL"))
    root_index = st.one_of(_root_index_default, blobs)

    @st.composite
    def draw_tree(draw: st.DrawFn) -> dict[bytes, Blob]:
        return _v2_tree(draw, blobs, names, tops, deeper, leaves, root_index)

    return draw_tree()


def _v2_tree(
    draw: st.DrawFn,
    blobs: st.SearchStrategy[Blob],
    names: st.SearchStrategy[bytes],
    tops: st.SearchStrategy[bytes],
    deeper: st.SearchStrategy[list[bytes]],
    leaves: st.SearchStrategy[bytes],
    root_index: st.SearchStrategy[Blob],
) -> dict[bytes, Blob]:
    tree: dict[bytes, Blob] = {}
    tree[INDEX] = draw(root_index)
    for _ in range(draw(_counts)):  # root files: root <label> blocks
        tree[draw(names) + draw(_root_extensions)] = draw(blobs)
    for _ in range(draw(_counts)):  # child indexes: first level, nested, under skills/
        parts = [draw(tops), *draw(deeper)]
        directory = b"/".join(parts[: min(draw(_depths), len(parts))])
        if draw(_one_in_five):
            tree[directory + b"/" + INDEX] = draw(blobs)
        for _ in range(draw(_pair)):  # files beside an index: listed, not read
            tree[directory + b"/" + draw(leaves) + draw(_beside_extensions)] = draw(blobs)
    if draw(_one_in_four) == 0:
        tree[b"system/" + draw(names) + b".md"] = draw(blobs)  # a v1 system/ file in a v2 repository
    return tree


_js_text = js_text()
_odd_numbers = st.sampled_from(ODD_NUMBERS)
_skill_texts = st.one_of(
    st.sampled_from(SKILL_NAMES),
    st.text(alphabet=st.sampled_from("aZ_- .é\u00a0\ufeff\t<>&\"'`$"), min_size=1, max_size=8),
    _js_text,
    _js_text,
)
_descriptions = st.one_of(
    st.sampled_from(("Build the project", "", "  padded  ", "two\nlines", "crlf\r\nline", "\u00a0nbsp\u3000", "\n")),
    st.text(alphabet=st.sampled_from("ab \n\r\t\u0085\u2028\ufeff<>&$"), max_size=12),
    st.sampled_from((None, 1, True, ["x"], {"a": 1})),
    _js_text,
    _odd_numbers,
)
_location_names = st.sampled_from(
    (
        "/home/user/.letta/skills/build/SKILL.md",
        "/home/user/.letta/skills/tools/nested/deep/SKILL.md",
        "/repo/.skills/review/SKILL.md",
        "relative/skill/SKILL.md",
        "/a/skills/x/../y/SKILL.md",
        "",
        "/",
        "C:\\skills\\win\\SKILL.md",
    )
)
_locations = st.one_of(
    _location_names,
    _location_names,
    st.builds(lambda name: f"/home/user/.letta/skills/{name}/SKILL.md", _js_text),
    _odd_numbers,
)
_names = st.one_of(_skill_texts, _skill_texts, st.sampled_from(("", None)), _odd_numbers)


_skill_kind = st.integers(0, 11)
_not_objects = st.sampled_from((None, "build", 3, ["build"], True))
_one_in_six = st.integers(0, 5)
_booleans = st.booleans()


@st.composite
def skills(draw: st.DrawFn) -> Any:
    """One entry of a `client_skills` list: mostly a skill object, sometimes not an object at all."""
    kind = draw(_skill_kind)
    if kind == 0:
        return draw(_not_objects)
    skill: dict[str, Any] = {}
    if kind != 1:  # kind 1: no name
        skill["name"] = draw(_names)
    if draw(_one_in_six):
        skill["description"] = draw(_descriptions)
    if draw(_booleans):
        skill["location"] = draw(_locations)
    return skill


client_skills_values: st.SearchStrategy[Any] = st.one_of(
    st.lists(skills(), max_size=5),
    st.lists(skills(), max_size=5),
    st.lists(skills(), max_size=5),
    st.sampled_from(([], None, {}, "build", {"name": "x", "description": "not a list"})),
)
