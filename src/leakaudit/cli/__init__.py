"""The ``leakaudit`` command line: one module per command, all imported here.

Every :class:`~leakaudit.exceptions.LeakauditError` becomes one line on stderr
and exit status 2; usage errors also exit 2 (click's convention). Ctrl-C in any
command becomes one line on stderr (what was running, what was written) and exit
status 130: a command describes its own interruption by wrapping its work in
:func:`~leakaudit._interrupt.on_interrupt`; any other KeyboardInterrupt gets a generic line.

The command modules import only typer and the standard library at module level; everything
else is imported inside the command that needs it. Each command is registered when it runs
(:class:`~leakaudit.cli._typer.TopGroup`), so ``leakaudit --help`` and ``leakaudit --version`` load
none of the numerical stack, and a command loads only what it uses. The layer above all others: nothing
in the package imports ``leakaudit.cli``.
"""

from __future__ import annotations

import errno

import typer

from .._version import __version__
from .._interrupt import on_sigint
from ..exceptions import LeakauditError
from . import attribute, audit, datasets, doctor, dp_audit, dtp, lm, membership, mip, report, reproduce, unlearning
from . import property as property_
from ._echo import echo
from ._typer import Stopped, TopGroup
from ._warnings import summarised_warnings

__all__ = ["app", "main"]


class _Commands(TopGroup):
    # the order of `leakaudit --help`: commands in this order, then the groups (dtp, mip) in theirs
    lazy = {"datasets": datasets, "reproduce": reproduce, "audit": audit, "membership": membership,
            "dp-audit": dp_audit, "unlearning-check": unlearning, "lm-dataset-inference": lm, "lm-canary-audit": lm, "attribute": attribute,
            "property": property_, "report": report, "doctor": doctor, "dtp": dtp, "mip": mip}


app = typer.Typer(
    name="leakaudit",
    help="Measure what a trained model leaks about its training data, and whether to publish it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_Commands,
)


def _version(value: bool) -> None:
    if value:
        echo(f"leakaudit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, metavar="",
                                 help="Print the version and exit (default: off)."),
) -> None:
    """leakaudit command line."""


#: the errors of a write that no path names (a full disk, a quota, a read-only folder, a file too large)
_WRITE_ERRNOS = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG") if hasattr(errno, n))


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning our errors into one line and exit status 2, Ctrl-C into one line and 130.

    Warnings are printed when the command ends, one line each and summarised (:mod:`leakaudit.cli._warnings`),
    before its last line; a command that ends with an error prints the error's one line alone.
    """
    import signal
    import threading

    # our own SIGINT handler (only where Python's default one is in place: not where Ctrl-C is ignored, as in a
    # background job, and not off the main thread): counts Ctrl-Cs so a swallowed one is still seen
    own = (threading.current_thread() is threading.main_thread()
           and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if own:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        with summarised_warnings() as warned:
            rc, last = _run(argv)
        warned.flush(show=rc != 2)
        if last:
            echo(last, err=True)
        return rc
    finally:
        if own:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(argv: list[str] | None) -> tuple[int, str | None]:
    """Run the command: its exit status and the one line that ends it on stderr (None: none)."""
    import warnings

    try:
        # scikit-learn's MLP warns when it swallows Ctrl-C; our one line says it instead
        warnings.filterwarnings("ignore", message="Training interrupted by user")
        # without standalone mode click returns a command's typer.Exit code instead of raising it
        rc = app(args=argv, standalone_mode=False)
    except Stopped as exc:
        return 130, f"leakaudit: {' '.join(str(exc).split())}"
    except LeakauditError as exc:
        msg = " ".join(str(exc).split())  # always one line
        if "`" in msg:  # the library names a setting as `key`: here, its flag
            from ..audit.config import in_words

            msg = in_words(msg, flags=True)
        return 2, f"leakaudit: error: {msg}"
    except typer.Exit as exc:
        return exc.exit_code, None
    except MemoryError:  # what no estimate foresaw: one line, never a traceback
        return 2, ("leakaudit: error: out of memory (a MemoryError): the work asked for needs more memory than this "
                   "process may use; use fewer records, models or a smaller profile")
    except OSError as exc:  # a write outside the paths that name their file (a full disk, a quota, a read-only folder)
        if exc.errno not in _WRITE_ERRNOS:
            raise
        from .._results import write_problem

        return 2, f"leakaudit: error: {write_problem(exc)} writing {exc.filename or 'the outputs'}"
    except typer.Abort:
        return 130, "leakaudit: aborted"
    except Exception as exc:  # click's usage errors (typer vendors click, so match by shape)
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            return 2, f"leakaudit: error: {exc.format_message()}"
        raise
    except KeyboardInterrupt:  # outside any command: while starting up or parsing arguments
        return 130, "leakaudit: interrupted (Ctrl-C) while starting; nothing was run"
    return (rc if isinstance(rc, int) else 0), None
