"""What a ``qnnweb`` command exits with when it cannot do its job (besides qnnweb.ModelError, exit 2)."""


class UsageError(Exception):
    """The command line asks for something impossible (exit 1): a bad flag or value, a missing tool."""

    exit_code = 1


class InputFileError(Exception):
    """A file named on the command line cannot be read as what it should be (exit 2)."""

    exit_code = 2
