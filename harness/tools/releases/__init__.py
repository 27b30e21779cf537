"""harness/tools/releases: see docs/harness.md."""
