"""Speed and scale measurements of the port against the reference (`nox -s bench`, `python -m benchmarks`), and
the shape of harness/'s imports against issue 39's layers (`python -m benchmarks.layering`, docs/reshape.md)."""
