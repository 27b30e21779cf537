"""harness/run: see docs/harness.md."""
