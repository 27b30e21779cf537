"""`conformance pin npm:X | pypi:X`: pin a new upstream release in reference/manifest.json
(harness.tools.releases.pin)."""

from __future__ import annotations

import argparse
import sys

from harness.acquire.releases import ReferenceUnavailable
from harness.cli.common import Commands
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
        digest = pinned.pin.get("integrity") or pinned.pin.get("sha256")
        print(f"{pinned.spec.cli}: {'already pinned' if pinned.already else 'pinned'} ({digest})")
        for line in pinned.advice():
            print(f"  {line}")
    return status


def register(commands: Commands) -> None:
    pin = commands.add_parser(
        "pin", help="pin new upstream releases: look each up, verify its download, record its digest"
    )
    pin.add_argument("release", nargs="+", help="npm:VERSION or pypi:VERSION (a bare version means pypi:)")
    pin.set_defaults(func=cmd_pin)
