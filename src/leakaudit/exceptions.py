"""The one error family of leakaudit, and its named warnings.

Every error a user can cause (bad arrays, bad files, bad parameters, unsafe model
files) is a :class:`LeakauditError`. Subclasses also subclass ``ValueError`` or
``TypeError`` where that fits, as scikit-learn's ``InvalidParameterError`` does,
so ``except ValueError`` keeps working. The command line turns any of them into
one line on stderr and exit status 2.
"""

from __future__ import annotations

__all__ = [
    "LeakauditError",
    "InvalidInputError",
    "TrainingFailedError",
    "InvalidParameterError",
    "DataFileError",
    "UnsafeFileError",
    "UnsupportedError",
    "OutputWriteError",
    "NotEstimableWarning",
    "ApproximationWarning",
]


class LeakauditError(Exception):
    """Base class of every error leakaudit raises on purpose.

    ``problems`` holds every problem found when a check collects several
    (a config with two unknown columns, say); ``str(err)`` joins them.
    """

    def __init__(self, message: str | None = None, *, problems: list[str] | None = None):
        self.problems = list(problems) if problems else ([message] if message else [])
        super().__init__(message if message is not None else "; ".join(self.problems))


class InvalidInputError(LeakauditError, ValueError):
    """An array, table or file content that cannot be used (shape, NaN, sums, classes)."""


class TrainingFailedError(InvalidInputError):
    """A learner's library that failed to train one model on one training set (LightGBM's internal checks, say); the
    message gives the library's reason. A model whose training set is a random draw (a reference model) may be
    redrawn; one whose training set is fixed (a leave-one-out model) cannot."""


class InvalidParameterError(LeakauditError, ValueError, TypeError):
    """A parameter outside its allowed set or range."""


class DataFileError(LeakauditError, FileNotFoundError):
    """A data file that is missing, unreadable, corrupt or fails its checksum."""


class UnsafeFileError(LeakauditError, ValueError):
    """A model file refused because loading it could run code (pickle, unsafe skops types)."""


class UnsupportedError(LeakauditError, ValueError):
    """A model, learner or setting an attack or metric cannot handle."""


class OutputWriteError(LeakauditError):
    """An output (a result, a report, a cache entry) that could not be written: a full disk, a quota, a
    read-only file system. The message names the path; nothing partial is left in its place."""


class NotEstimableWarning(UserWarning):
    """A quantity that cannot be estimated from the data given (reported as NaN)."""


class ApproximationWarning(UserWarning):
    """A result computed by an approximation rather than exactly."""


class AuditInterrupted(KeyboardInterrupt):
    """An audit stopped by Ctrl-C: the message says what finished and where the trained models are kept."""
