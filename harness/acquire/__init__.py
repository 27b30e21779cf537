"""harness/acquire: see docs/harness.md."""
