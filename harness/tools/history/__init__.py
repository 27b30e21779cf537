"""harness/tools/history: see docs/harness.md."""
