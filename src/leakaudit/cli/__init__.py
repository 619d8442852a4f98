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

import typer

from .. import __version__
from .._interrupt import on_sigint
from ..exceptions import LeakauditError
from . import attribute, audit, datasets, doctor, dp_audit, dtp, membership, mip, reproduce
from . import property as property_
from ._typer import Stopped, TopGroup

__all__ = ["app", "main"]


class _Commands(TopGroup):
    # the order of `leakaudit --help`: commands in this order, then the groups (dtp, mip) in theirs
    lazy = {"datasets": datasets, "reproduce": reproduce, "audit": audit, "membership": membership,
            "dp-audit": dp_audit, "attribute": attribute, "property": property_, "doctor": doctor, "dtp": dtp,
            "mip": mip}


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
        typer.echo(f"leakaudit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, metavar="",
                                 help="Print the version and exit (default: off)."),
) -> None:
    """leakaudit command line."""



def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning our errors into one line and exit status 2, Ctrl-C into one line and 130."""
    import signal
    import threading
    import warnings

    # our own SIGINT handler (only where Python's default one is in place: not where Ctrl-C is ignored, as in a
    # background job, and not off the main thread): counts Ctrl-Cs so a swallowed one is still seen
    own = (threading.current_thread() is threading.main_thread()
           and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if own:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        with warnings.catch_warnings():
            # scikit-learn's MLP warns when it swallows Ctrl-C; our one line says it instead
            warnings.filterwarnings("ignore", message="Training interrupted by user")
            # without standalone mode click returns a command's typer.Exit code instead of raising it
            rc = app(args=argv, standalone_mode=False)
    except Stopped as exc:
        typer.echo(f"leakaudit: {' '.join(str(exc).split())}", err=True)
        return 130
    except LeakauditError as exc:
        typer.echo(f"leakaudit: error: {' '.join(str(exc).split())}", err=True)  # always one line
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        typer.echo("leakaudit: aborted", err=True)
        return 130
    except Exception as exc:  # click's usage errors (typer vendors click, so match by shape)
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            typer.echo(f"leakaudit: error: {exc.format_message()}", err=True)
            return 2
        raise
    except KeyboardInterrupt:  # outside any command: while starting up or parsing arguments
        typer.echo("leakaudit: interrupted (Ctrl-C) while starting; nothing was run", err=True)
        return 130
    finally:
        if own:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    return rc if isinstance(rc, int) else 0
