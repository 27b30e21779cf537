"""The `<available_skills>` block against upstream's own `compileAvailableSkillsBlock`.

`tests/data/skills_block_expected.json` holds what the real function returned (driver op
`skills_block`) for 0.25.3 (tree, `// @bun` Latin-1 connectors), 0.30.28 (tree), 0.31.12 and
0.34.12 (list). The integration tests ask the real releases again, on the same inputs and on a
seeded random sample of names, descriptions and locations.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from harness.core.reference import ReferenceSpec
from harness.runners.bun_reference import BunReferenceRunner
from memfs_prompt import profile_for_release
from memfs_prompt.skills_block import (
    append_available_skills_block,
    append_skills_for_profile,
    compile_available_skills_block,
    node_basename,
    node_dirname,
    node_relative,
    skill_root_and_relative_path,
)

EXPECTED = json.loads((Path(__file__).parent / "data" / "skills_block_expected.json").read_text("utf-8"))
SYSTEM = EXPECTED["systemPrompt"]
ROWS = [(version, index) for version, rows in EXPECTED["releases"].items() for index in range(len(rows))]


@pytest.mark.parametrize(("version", "index"), ROWS)
def test_port_matches_the_recorded_release_output(version: str, index: int) -> None:
    row = EXPECTED["releases"][version][index]
    profile = profile_for_release(version)
    block = compile_available_skills_block(
        row["clientSkills"], profile.skills_block, pragma_latin1_literals=profile.pragma_latin1_literals
    )
    assert block == row["block"]
    assert append_skills_for_profile(SYSTEM, row["clientSkills"], profile) == row["appended"]


def test_profiles_choose_the_format_by_release() -> None:
    assert [profile_for_release(v).skills_block for v in ("0.25.3", "0.25.9", "0.30.28")] == ["tree"] * 3
    assert {profile_for_release(v).skills_block for v in ("0.31.12", "0.32.13", "0.32.18", "0.33.3", "0.34.12")} == {
        "list"
    }


def test_list_format() -> None:
    skills = [{"name": "b", "description": "  first\nsecond"}, {"name": "a"}, {"name": "a", "description": "dup"}]
    assert compile_available_skills_block(skills) == "<available_skills>\n- `a`\n- `b`: first\n</available_skills>"


def test_nothing_to_show_leaves_the_prompt_untouched() -> None:
    nothing: list[Any] = [[], None, "not a list", [None, 0, "", [], {}, {"name": ""}, {"name": 3}]]
    for skills in nothing:
        assert append_available_skills_block("prompt \n\n", skills) == "prompt \n\n"
    assert append_available_skills_block("prompt \n\n", [{"name": "x"}]).startswith("prompt\n\n<available_skills>")


def test_description_keeps_a_carriage_return_before_the_split() -> None:
    # JS trim() then split("\n")[0]: the "\r" of a CRLF stays in the first line
    assert "- `x`: a \r\n" in compile_available_skills_block([{"name": "x", "description": "a \r\nb"}])


def test_tree_format_groups_by_location_root() -> None:
    skills = [
        {"name": "b", "description": "two"},
        {"name": "c", "location": "/x/y/c/SKILL.md"},
        {"name": "d", "location": "rel/d.md"},
    ]
    assert compile_available_skills_block(skills, "tree") == (
        "<available_skills>\n/x/y\n└── c/\n    └── SKILL.md\n\n"
        "${MEMORY_DIR}/skills\n└── b/\n    └── SKILL.md (two)\n\nrel\n└── d.md\n</available_skills>"
    )


def test_tree_format_under_the_bun_pragma_has_latin1_connectors() -> None:
    block = compile_available_skills_block([{"name": "a"}], "tree", pragma_latin1_literals=True)
    assert "â\x94\x94â\x94\x80â\x94\x80 a/" in block


@pytest.mark.parametrize(
    ("path", "dirname", "basename"),
    # measured with bun 1.4.5's node:path
    [
        ("a/b/SKILL.md", "a/b", "SKILL.md"),
        ("a///SKILL.md", "a//", "SKILL.md"),
        ("/SKILL.md", "/", "SKILL.md"),
        ("a//", ".", "a"),
        ("", ".", ""),
        ("//x", "//", "x"),
        ("/", "/", ""),
    ],
)
def test_node_path_dirname_and_basename(path: str, dirname: str, basename: str) -> None:
    assert node_dirname(path) == dirname
    assert node_basename(path) == basename


def test_node_path_relative() -> None:
    assert node_relative("/r", "/r/a/SKILL.md") == "a/SKILL.md"
    assert node_relative("/r/a", "/r/b/c") == "../b/c"
    assert node_relative("x/..", "f/SKILL.md") == "f/SKILL.md"
    assert node_relative("/a", "/a") == ""
    assert skill_root_and_relative_path("ns/deep", "/s/ns/deep/SKILL.md") == ("/s/ns", "deep/SKILL.md")
    assert skill_root_and_relative_path("other", "/s/x/SKILL.md") == ("/s/x", "SKILL.md")


@pytest.mark.parametrize(
    ("path", "dirname", "basename", "relative_to_a"),
    # measured with bun 1.4.5's node:path (node's keeps the surrogates)
    [
        ("/a/\ud800\ud800/b", "/a/\ufffd\ufffd", "b", "\ufffd\ufffd/b"),
        ("/a/\udc00\ud800/b", "/a/\ufffd\ufffd", "b", "\ufffd\ufffd/b"),
        ("/a/\U0001f980\ud800/b", "/a/\U0001f980\ufffd", "b", "\U0001f980\ufffd/b"),
        ("/a\ud800/b/c", "/a\ufffd/b", "c", "../a\ufffd/b/c"),
        ("/\ud800", "/", "\ufffd", "../\ufffd"),
    ],
)
def test_bun_node_path_gives_lone_surrogates_back_as_replacement_characters(
    path: str, dirname: str, basename: str, relative_to_a: str
) -> None:
    assert (node_dirname(path), node_basename(path), node_relative("/a", path)) == (dirname, basename, relative_to_a)
    # so a skill whose directory is named with a lone surrogate groups under that directory (0.25.3 to 0.30.28)
    assert skill_root_and_relative_path("a\ud800b", "/s/a\ud800b/SKILL.md") == ("/s/a\ufffdb", "SKILL.md")


def test_unknown_style_is_an_error() -> None:
    with pytest.raises(ValueError, match="tree or list"):
        compile_available_skills_block([{"name": "a"}], "table")


# --- against the real releases ---------------------------------------------------------------

ALPHABET = ["a", "B", "_", "-", ".", "/", "é", " ", "\\", "$", "0", "9", "SKILL.md", "..", "~", "\n", "\t"]


def random_skill_lists(seed: int, count: int) -> list[list[dict[str, Any]]]:
    rnd = random.Random(seed)

    def text(n: int) -> str:
        return "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, n)))

    lists = []
    for _ in range(count):
        skills: list[dict[str, Any]] = []
        for _ in range(rnd.randint(0, 6)):
            skill: dict[str, Any] = {}
            if rnd.random() < 0.9:
                skill["name"] = text(4).replace("\n", "").replace("\t", "")
            if rnd.random() < 0.6:
                skill["description"] = text(6)
            if rnd.random() < 0.5:
                parts = "/".join(text(3).replace("\n", "") for _ in range(rnd.randint(0, 3)))
                skill["location"] = rnd.choice(["/r/", "r/", "", "/"]) + parts + rnd.choice(["/SKILL.md", ".md", " "])
            skills.append(skill)
        lists.append(skills)
    return lists


@pytest.mark.integration
@pytest.mark.parametrize("version", ["0.25.3", "0.30.28", "0.32.18"])
def test_port_matches_the_real_function(tmp_path: Path, reference_bun: Path, release_bundle, version: str) -> None:
    release_bundle(version)
    runner = BunReferenceRunner(ReferenceSpec("npm", version), tmp_path / "home", ceiling=tmp_path, timeout=120)
    runner.start()
    assert runner.start_error is None, runner.start_error
    profile = profile_for_release(version)
    inputs = [row["clientSkills"] for row in EXPECTED["releases"]["0.34.12"]] + random_skill_lists(7, 60)
    try:
        for skills in inputs:
            answer = runner.process.request({"op": "skills_block", "systemPrompt": SYSTEM, "clientSkills": skills}, 60)
            assert answer["ok"], answer
            assert append_skills_for_profile(SYSTEM, skills, profile) == answer["appended"], skills
    finally:
        runner.close()


# --- on turns (memfs_prompt.conversation) ------------------------------------------------------


def test_turn_appends_that_turns_skills_only(tmp_path: Path, git_env) -> None:
    from datetime import UTC, datetime

    from compiler_cases import RepoSpec, build

    from memfs_prompt.conversation import LocalConversations

    memory = build(RepoSpec(files={"system/persona.md": "I am an agent.\n"}), tmp_path, git_env)
    store = LocalConversations(
        memory, agent_id="agent-1", system="S {CORE_MEMORY}", clock=lambda: datetime(2026, 1, 2, tzinfo=UTC)
    )
    conversation = store.create_conversation()
    plain = store.turn(conversation, "hi").system_prompt
    with_skills = store.turn(conversation, "hi", [{"name": "b"}, {"name": "a", "description": "x"}]).system_prompt
    assert with_skills == plain + "\n\n<available_skills>\n- `a`: x\n- `b`\n</available_skills>"
    assert store.turn(conversation, "hi", []).system_prompt == plain
    assert conversation.compiled is not None and "available_skills" not in conversation.compiled.content


def test_agent_free_conversation_sends_its_raw_system_prompt(tmp_path: Path, git_env) -> None:
    from datetime import UTC, datetime

    from compiler_cases import RepoSpec, build

    from memfs_prompt.conversation import LocalConversations

    memory = build(RepoSpec(files={"MEMORY.md": "# M\n", "human.md": "Ana\n"}), tmp_path, git_env)
    store = LocalConversations(
        memory, agent_id="agent-1", system="S {CORE_MEMORY}", clock=lambda: datetime(2026, 1, 2, tzinfo=UTC)
    )
    free = store.create_agent_free_conversation("local-conv-x", system="W {CORE_MEMORY}\n", model="m/x")
    first = store.turn(free, "hi", [{"name": "s1"}])
    assert first.system_prompt == "W {CORE_MEMORY}\n\n<available_skills>\n- `s1`\n</available_skills>"
    assert (first.mid_conversation_system_prompt, first.model, first.history_count) == (None, "m/x", 1)
    second = store.turn(free, "again")
    assert second.system_prompt == "W {CORE_MEMORY}\n" and len(second.ui_messages) == 3
    assert free.compiled is None
