"""`conformance pin REGISTRY:X`: pin a new upstream release in reference/manifest.json
(harness.tools.releases.pin; the registries are harness.core.registries')."""

from __future__ import annotations

import argparse
import sys

from harness.acquire.releases import ReferenceUnavailable
from harness.cli.common import Commands
from harness.core.registries import CURRENT_REGISTRY, REGISTRY_NAMES, registry
from harness.tools.releases.pin import pin_release


def cmd_pin(args: argparse.Namespace) -> int:
    status = 0
    for text in args.release:
        try:
            pinned = pin_release(text)
        except (ValueError, ReferenceUnavailable) as error:
            print(f"error: {error}", file=sys.stderr)
            status = 2
            continue
        digest = pinned.pin[registry(pinned.spec.kind).digest_key]
        print(f"{pinned.spec.cli}: {'already pinned' if pinned.already else 'pinned'} ({digest})")
        for line in pinned.advice():
            print(f"  {line}")
    return status


def register(commands: Commands) -> None:
    pin = commands.add_parser(
        "pin", help="pin new upstream releases: look each up, verify its download, record its digest"
    )
    forms = " or ".join(f"{name}:VERSION" for name in REGISTRY_NAMES)
    pin.add_argument("release", nargs="+", help=f"{forms} (a bare version means {CURRENT_REGISTRY.name}:)")
    pin.set_defaults(func=cmd_pin)
