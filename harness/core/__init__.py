"""harness/core: see docs/harness.md."""
