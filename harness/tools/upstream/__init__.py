"""Upstream's own tests run against the implementation under test: which files run (select), the bridge to
the implementation, one `bun test` file (bun_file), each test's verdict (verdict) and the suite (suite)."""
