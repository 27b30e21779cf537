"""The registries table (harness.core.registries) and the reference label (harness.core.reference): each rule in
one place, checked against the manifest, the fetcher modules and the rest of the tree."""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from harness.acquire.releases import ReleaseFetcher, fetcher
from harness.core.reference import (
    ReferenceSpec,
    cli_of_label,
    label_of_runner,
    pinned_references,
    release_key,
    release_parts,
)
from harness.core.registries import MANIFEST_PATH, REGISTRIES, REGISTRY_NAMES, pin_table, registry

HARNESS = Path(__file__).parents[1] / "harness"


@pytest.mark.parametrize("row", REGISTRIES, ids=lambda row: row.name)
def test_every_row_finds_its_pins_in_the_manifest_each_with_its_digest(row) -> None:
    pins = pin_table(json.loads(MANIFEST_PATH.read_text(encoding="utf-8")), row.name)
    assert pins, f"{row.name}: no pins at {row.pins_at}"
    assert all(row.digest_key in pin for pin in pins.values())


@pytest.mark.parametrize("row", REGISTRIES, ids=lambda row: row.name)
def test_every_row_names_a_fetcher_module_with_the_whole_protocol(row) -> None:
    module = importlib.import_module(row.fetcher)
    wanted = {name for name, _ in inspect.getmembers(ReleaseFetcher, inspect.isfunction) if not name.startswith("_")}
    assert wanted == {"ensure", "own_node", "pin", "latest"}
    assert all(callable(getattr(module, name, None)) for name in wanted), row.fetcher
    assert fetcher(row.name) is module


def test_exactly_one_registry_is_labelled_bare_and_one_takes_bare_pins() -> None:
    assert sum(row.bare_label for row in REGISTRIES) == 1
    assert sum(row.publishes_now for row in REGISTRIES) == 1
    with pytest.raises(KeyError):
        registry("bundle")


# What branching on a registry by name looks like; outside the table and the fetchers it is a rule written twice.
_BRANCH = re.compile(r"""(kind|registry) [!=]= "(%s)"|\["(%s)"\]|f"(%s):""" % (("|".join(REGISTRY_NAMES),) * 3))


def test_no_module_outside_the_table_and_the_fetchers_branches_on_a_registry_name() -> None:
    allowed = {
        "core/registries.py",
        *(row.fetcher.removeprefix("harness.").replace(".", "/") + ".py" for row in REGISTRIES),
    }
    offenders = [
        f"{path.relative_to(HARNESS)}:{number}"
        for path in sorted(HARNESS.rglob("*.py"))
        if str(path.relative_to(HARNESS)) not in allowed
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _BRANCH.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize("text", ["npm:0.32.18", "npm:0.32.18@node/da_DK.UTF-8", "pypi:0.34.12@node", "pypi:0.34.12"])
def test_a_label_names_its_spec_again_and_a_runner_name_its_label(text: str) -> None:
    spec = ReferenceSpec.parse(text)
    assert ReferenceSpec.from_label(spec.label) == spec
    assert ReferenceSpec.parse(cli_of_label(spec.label)) == spec
    assert label_of_runner(spec.runner_name) == spec.label


def test_an_npm_release_is_labelled_bare_and_its_runner_carries_the_profile_spelling() -> None:
    spec = ReferenceSpec.parse("npm:0.32.18@node")
    assert (spec.label, spec.runner_name) == ("0.32.18@node", "letta-code@0.32.18@node")
    assert ReferenceSpec.parse("pypi:0.34.12").runner_name == "pypi:0.34.12"
    assert release_parts("letta-code@0.32.18") == ("npm", "0.32.18", "")
    assert release_parts("bundle:/x/letta.js") is None


def test_release_order_puts_registries_in_table_order_for_one_version_and_variants_after() -> None:
    labels = ["pypi:0.32.18", "0.32.18@node", "bundle:/x", "0.32.18", "0.32.8"]
    assert sorted(labels, key=release_key) == ["0.32.8", "0.32.18", "0.32.18@node", "pypi:0.32.18", "bundle:/x"]


def test_pinned_references_follow_release_order() -> None:
    labels = [spec.label for spec in pinned_references()]
    assert labels == sorted(labels, key=release_key)
