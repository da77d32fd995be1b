"""The exceptions phishbloom raises; each carries the library's message, which says how to fix it."""


class Error(Exception):
    """Base of every phishbloom error."""


class ParameterError(Error, ValueError):
    """A size, rate or option outside its range (n <= 0, a rate outside (0, 1), an unknown kind)."""


class ListError(Error, ValueError):
    """A list, filter or source whose content cannot be used: corrupt or truncated files, a file
    of another kind, filters of different sizes combined, malformed CSV."""


class FileError(Error, OSError):
    """A file that could not be read or written."""
