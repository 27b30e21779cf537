"""Speed and scale measurements of the port against the reference (`nox -s bench`, `python -m benchmarks`)."""
