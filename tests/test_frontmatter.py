"""memfs_prompt.frontmatter: each release line's parseFrontmatter, against upstream's own parser.

Every expected value below was measured by running upstream's parseFrontmatter, cut verbatim
out of the release bundles (src/utils/frontmatter.ts section of letta.js), under bun 1.4.5:
Dialect.V0_25 on letta-code 0.25.3, V0_30 on 0.30.28, V0_31 on 0.31.12, V0_32_17 on 0.32.17
(0.32.18 gave identical results for every input). Regenerate with
`python tests/upstream_oracle.py 0.25.3 0.30.28 0.31.12 0.32.17 0.32.18`; the integration test
at the bottom re-measures them from the fetched release bundles.
"""

from __future__ import annotations

import pytest

from memfs_prompt.frontmatter import Dialect, normalize_newlines, parse_block_scalar, parse_frontmatter
from memfs_prompt.profiles import profile_for_release

INPUTS: dict[str, str] = {
    "no_frontmatter": "Just a body\n  with spaces  \n",
    "empty_frontmatter_blank_line": "---\n\n---\nbody",
    "empty_frontmatter_adjacent_fences": "---\n---\nbody",
    "unclosed": "---\ndescription: x\nbody text\n",
    "closing_fence_at_eof": "---\ndescription: d\n---",
    "closing_fence_then_newline": "---\ndescription: d\n---\n",
    "no_newline_after_closing_fence": "---\ndescription: d\n---body",
    "crlf": "---\r\ndescription: crlf\r\n---\r\nline1\r\nline2\r\n",
    "cr": "---\rdescription: cr\r---\rline1\rline2\r",
    "lf_cr": "---\n\rdescription: lfcr\n\r---\n\rbody\n\r",
    "bom": "\ufeff---\ndescription: bom\n---\nbody",
    "bom_twice": "\ufeff\ufeff---\ndescription: bom\n---\nbody",
    "bom_mid_body": "---\ndescription: d\n---\n\ufeffbody\ufeff",
    "list_description": "---\ndescription:\n  - first\n  - second\nname: n\n---\nbody",
    "list_items_deeply_indented": "---\ndescription:\n   - three\n    - four\n  - two\n---\nbody",
    "list_item_without_key": "---\n- stray\ndescription: d\n---\nbody",
    "bare_key": "---\ndescription:\n---\nbody",
    "indented_key_three_spaces": "---\n   description: indented\nname: top\n---\nbody",
    "indented_key_one_space": "---\n description: one\n---\nbody",
    "tab_indented": "---\n\tdescription: tab\ntags:\n\t- item\n---\nbody",
    "block_literal": "---\ndescription: |\n  line one\n\n  line three\n\n\nname: after\n---\nbody",
    "block_literal_strip": "---\ndescription: |-\n  line one\n\n  line three\n\n\nname: after\n---\nbody",
    "block_literal_keep": "---\ndescription: |+\n  line one\n\n  line three\n\n\nname: after\n---\nbody",
    "block_folded": "---\ndescription: >\n  folded a\n  folded b\n\n  para two\n\n\nname: after\n---\nbody",
    "block_folded_strip": "---\ndescription: >-\n  folded a\n  folded b\n\n  para two\n\n\nname: after\n---\nbody",
    "block_folded_leading_blank": "---\ndescription: >\n\n  a\n  b\n---\nbody",
    "block_more_indented": "---\ndescription: |\n  a\n    b\n  c\n---\nbody",
    "block_empty": "---\ndescription: |\nname: x\n---\nbody",
    "block_to_end_of_frontmatter": "---\ndescription: >-\n  only line\n\n---\nbody",
    "body_trimmed": "---\ndescription: d\n---\n\n \t body \u00a0\n\n",
    "body_trim_js_whitespace_set": "---\ndescription: d\n---\n\ufeff\u3000body\u0085\u200b\u2028",
    "description_with_colons": "---\ndescription: a: b: c\n---\nbody",
    "description_padded": "---\ndescription: \u3000 padded \u00a0\u0085\n---\nbody",
    "colon_at_line_start": "---\n: nokey\ndescription: d\n---\nbody",
    "fence_in_body": "---\ndescription: d\n---\nbody\n---\nmore\n",
    "duplicate_description": "---\ndescription: first\ndescription: second\n---\nbody",
    "proto_key": "---\n__proto__: x\ndescription: d\n---\nbody",
}


def every_dialect(value: tuple[dict, str]) -> dict[Dialect, tuple[dict, str]]:
    """The same measured result on all four release lines."""
    return dict.fromkeys(Dialect, value)


# Measured on letta-code 0.25.3 / 0.30.28 / 0.31.12 / 0.32.17 (and 0.32.18) under bun 1.4.5.
EXPECTED: dict[str, dict[Dialect, tuple[dict, str]]] = {
    "no_frontmatter": every_dialect(({}, "Just a body\n  with spaces  \n")),
    "empty_frontmatter_blank_line": {
        Dialect.V0_25: ({}, "---\n\n---\nbody"),
        Dialect.V0_30: ({}, "body"),
        Dialect.V0_31: ({}, "body"),
        Dialect.V0_32_17: ({}, "body"),
    },
    "empty_frontmatter_adjacent_fences": every_dialect(({}, "---\n---\nbody")),
    "unclosed": every_dialect(({}, "---\ndescription: x\nbody text\n")),
    "closing_fence_at_eof": {
        Dialect.V0_25: ({}, "---\ndescription: d\n---"),
        Dialect.V0_30: ({"description": "d"}, ""),
        Dialect.V0_31: ({"description": "d"}, ""),
        Dialect.V0_32_17: ({"description": "d"}, ""),
    },
    "closing_fence_then_newline": {
        Dialect.V0_25: ({}, "---\ndescription: d\n---\n"),
        Dialect.V0_30: ({"description": "d"}, ""),
        Dialect.V0_31: ({"description": "d"}, ""),
        Dialect.V0_32_17: ({"description": "d"}, ""),
    },
    "no_newline_after_closing_fence": every_dialect(({}, "---\ndescription: d\n---body")),
    "crlf": every_dialect(({"description": "crlf"}, "line1\nline2")),
    "cr": every_dialect(({"description": "cr"}, "line1\nline2")),
    "lf_cr": every_dialect(({"description": "lfcr"}, "body")),
    "bom": every_dialect(({"description": "bom"}, "body")),
    "bom_twice": every_dialect(({}, "\ufeff---\ndescription: bom\n---\nbody")),
    "bom_mid_body": every_dialect(({"description": "d"}, "body")),
    "list_description": every_dialect(({"description": ["first", "second"], "name": "n"}, "body")),
    "list_items_deeply_indented": {
        Dialect.V0_25: ({"description": ["three", "four", "two"]}, "body"),
        Dialect.V0_30: ({"description": ["three", "four", "two"]}, "body"),
        Dialect.V0_31: ({"description": ["two"]}, "body"),
        Dialect.V0_32_17: ({"description": ["two"]}, "body"),
    },
    "list_item_without_key": every_dialect(({"description": "d"}, "body")),
    "bare_key": {
        Dialect.V0_25: ({}, "body"),
        Dialect.V0_30: ({"description": ""}, "body"),
        Dialect.V0_31: ({"description": ""}, "body"),
        Dialect.V0_32_17: ({"description": ""}, "body"),
    },
    "indented_key_three_spaces": {
        Dialect.V0_25: ({"description": "indented", "name": "top"}, "body"),
        Dialect.V0_30: ({"description": "indented", "name": "top"}, "body"),
        Dialect.V0_31: ({"name": "top"}, "body"),
        Dialect.V0_32_17: ({"name": "top"}, "body"),
    },
    "indented_key_one_space": {
        Dialect.V0_25: ({"description": "one"}, "body"),
        Dialect.V0_30: ({"description": "one"}, "body"),
        Dialect.V0_31: ({}, "body"),
        Dialect.V0_32_17: ({}, "body"),
    },
    "tab_indented": {
        Dialect.V0_25: ({"description": "tab", "tags": ["item"]}, "body"),
        Dialect.V0_30: ({"description": "tab", "tags": ["item"]}, "body"),
        Dialect.V0_31: ({"tags": ["item"]}, "body"),
        Dialect.V0_32_17: ({"tags": ["item"]}, "body"),
    },
    "block_literal": {
        Dialect.V0_25: ({"description": "|", "name": "after"}, "body"),
        Dialect.V0_30: ({"description": "|", "name": "after"}, "body"),
        Dialect.V0_31: ({"description": "|", "name": "after"}, "body"),
        Dialect.V0_32_17: ({"description": "line one\n\nline three\n", "name": "after"}, "body"),
    },
    "block_literal_strip": {
        Dialect.V0_25: ({"description": "|-", "name": "after"}, "body"),
        Dialect.V0_30: ({"description": "|-", "name": "after"}, "body"),
        Dialect.V0_31: ({"description": "|-", "name": "after"}, "body"),
        Dialect.V0_32_17: ({"description": "line one\n\nline three", "name": "after"}, "body"),
    },
    "block_literal_keep": {
        Dialect.V0_25: ({"description": "|+", "name": "after"}, "body"),
        Dialect.V0_30: ({"description": "|+", "name": "after"}, "body"),
        Dialect.V0_31: ({"description": "|+", "name": "after"}, "body"),
        Dialect.V0_32_17: ({"description": "line one\n\nline three\n\n\n", "name": "after"}, "body"),
    },
    "block_folded": {
        Dialect.V0_25: ({"description": ">", "name": "after"}, "body"),
        Dialect.V0_30: ({"description": ">", "name": "after"}, "body"),
        Dialect.V0_31: ({"description": ">", "name": "after"}, "body"),
        Dialect.V0_32_17: ({"description": "folded a folded b\npara two\n", "name": "after"}, "body"),
    },
    "block_folded_strip": {
        Dialect.V0_25: ({"description": ">-", "name": "after"}, "body"),
        Dialect.V0_30: ({"description": ">-", "name": "after"}, "body"),
        Dialect.V0_31: ({"description": ">-", "name": "after"}, "body"),
        Dialect.V0_32_17: ({"description": "folded a folded b\npara two", "name": "after"}, "body"),
    },
    "block_folded_leading_blank": {
        Dialect.V0_25: ({"description": ">"}, "body"),
        Dialect.V0_30: ({"description": ">"}, "body"),
        Dialect.V0_31: ({"description": ">"}, "body"),
        Dialect.V0_32_17: ({"description": "\na b\n"}, "body"),
    },
    "block_more_indented": {
        Dialect.V0_25: ({"description": "|"}, "body"),
        Dialect.V0_30: ({"description": "|"}, "body"),
        Dialect.V0_31: ({"description": "|"}, "body"),
        Dialect.V0_32_17: ({"description": "a\n  b\nc\n"}, "body"),
    },
    "block_empty": {
        Dialect.V0_25: ({"description": "|", "name": "x"}, "body"),
        Dialect.V0_30: ({"description": "|", "name": "x"}, "body"),
        Dialect.V0_31: ({"description": "|", "name": "x"}, "body"),
        Dialect.V0_32_17: ({"description": "\n", "name": "x"}, "body"),
    },
    "block_to_end_of_frontmatter": {
        Dialect.V0_25: ({"description": ">-"}, "body"),
        Dialect.V0_30: ({"description": ">-"}, "body"),
        Dialect.V0_31: ({"description": ">-"}, "body"),
        Dialect.V0_32_17: ({"description": "only line"}, "body"),
    },
    "body_trimmed": every_dialect(({"description": "d"}, "body")),
    "body_trim_js_whitespace_set": every_dialect(({"description": "d"}, "body\x85\u200b")),
    "description_with_colons": every_dialect(({"description": "a: b: c"}, "body")),
    "description_padded": every_dialect(({"description": "padded \xa0\x85"}, "body")),
    "colon_at_line_start": every_dialect(({"description": "d"}, "body")),
    "fence_in_body": every_dialect(({"description": "d"}, "body\n---\nmore")),
    "duplicate_description": every_dialect(({"description": "second"}, "body")),
    "proto_key": every_dialect(({"description": "d"}, "body")),
}


def test_every_input_has_a_measured_expectation_for_every_dialect():
    assert set(EXPECTED) == set(INPUTS)
    for name, per_dialect in EXPECTED.items():
        assert set(per_dialect) == set(Dialect), name


@pytest.mark.parametrize("dialect", list(Dialect), ids=lambda d: d.name)
@pytest.mark.parametrize("case", list(INPUTS))
def test_parse_frontmatter_matches_upstream_release(case: str, dialect: Dialect) -> None:
    parsed = parse_frontmatter(INPUTS[case], dialect)
    frontmatter, body = EXPECTED[case][dialect]
    assert (parsed.frontmatter, parsed.body) == (frontmatter, body)


@pytest.mark.parametrize(
    ("release", "dialect"),
    [
        ("0.25.3", Dialect.V0_25),
        ("0.25.9", Dialect.V0_25),  # parser differs from 0.25.3 only by bundler renames (match -> match2)
        ("0.30.28", Dialect.V0_30),
        ("0.31.12", Dialect.V0_31),
        ("0.32.8", Dialect.V0_31),  # section identical to 0.31.12's
        ("0.32.17", Dialect.V0_32_17),
        ("0.32.18", Dialect.V0_32_17),  # section identical to 0.32.17's
    ],
)
def test_each_release_uses_the_dialect_its_bundle_contains(release: str, dialect: Dialect) -> None:
    # Source: diffs of the src/utils/frontmatter.ts sections of the release bundles.
    assert profile_for_release(release).frontmatter is dialect


def test_normalize_newlines_strips_one_bom_then_crlf_then_cr() -> None:
    # upstream: content.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n").replace(/\r/g, "\n")
    assert normalize_newlines("\ufeff\ufeffa\r\nb\rc\n\rd") == "\ufeffa\nb\nc\n\nd"


@pytest.mark.parametrize(
    ("lines", "style", "chomping", "expected"),
    [
        (["  a", "", ""], "|", "+", "a\n\n\n"),
        (["  a", "", ""], "|", "", "a\n"),
        (["  a", "", ""], "|", "-", "a"),
        (["  a", "", "  b"], ">", "", "a\nb\n"),
        ([], ">", "+", "\n"),
    ],
)
def test_parse_block_scalar_chomping_matches_upstream(lines, style, chomping, expected) -> None:
    # Measured: parseBlockScalar of letta-code 0.32.18 (src/utils/frontmatter.ts) under bun 1.4.5.
    assert parse_block_scalar(lines, style, chomping) == expected


# --- re-measurement against the real bundles ---------------------------------------------------

RELEASE_FOR_DIALECT = {
    Dialect.V0_25: "0.25.3",
    Dialect.V0_30: "0.30.28",
    Dialect.V0_31: "0.31.12",
    Dialect.V0_32_17: "0.32.18",
}


@pytest.mark.integration
@pytest.mark.parametrize("dialect", list(Dialect), ids=lambda d: d.name)
def test_measured_literals_still_match_upstream_bundle(dialect: Dialect, reference_bun, release_bundle) -> None:
    from upstream_oracle import FRONTMATTER_MODULE, measure_frontmatter, module_section

    bundle = release_bundle(RELEASE_FOR_DIALECT[dialect])
    section = module_section(bundle.read_text(encoding="utf-8"), FRONTMATTER_MODULE)
    measured = measure_frontmatter(reference_bun, section, list(INPUTS.values()))
    for name, result in zip(INPUTS, measured, strict=True):
        assert (result["frontmatter"], result["body"]) == EXPECTED[name][dialect], name
