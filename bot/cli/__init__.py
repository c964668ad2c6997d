"""The ``deliberate`` command line. Exit codes: 0 ok, 1 rejected/conflict/not found,
2 usage or configuration error."""

__all__: list[str] = []
