"""The ``kvopt`` command line: ``kvopt.cli.main.main`` is the entry point."""
