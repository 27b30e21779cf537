"""The `conformance` command line: cli.main builds the parser from one thin module per command,
cli.common defines the options they share. Nothing in the library imports this package."""
