"""`python -m harness.cli`: the `conformance` command."""

import sys

from harness.cli.main import main

sys.exit(main())
