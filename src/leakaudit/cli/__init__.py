"""The ``leakaudit`` command line.

Every :class:`~leakaudit.exceptions.LeakauditError` becomes one line on stderr
and exit status 2; usage errors also exit 2 (click's convention). Ctrl-C in any
command becomes one line on stderr (what was running, what was written) and exit
status 130: a command describes its own interruption by wrapping its work in
:func:`on_interrupt`; any other KeyboardInterrupt gets a generic line. Heavy
modules are imported inside each command so ``leakaudit --version`` stays instant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

from . import __version__
from ._interrupt import on_interrupt, on_sigint
from .exceptions import LeakauditError


class _Stopped(Exception):
    """A KeyboardInterrupt carried past typer, which would turn it into a silent exit 130."""


class _Group(TyperGroup):
    """The top-level group: Ctrl-C anywhere below it leaves as :class:`_Stopped` with its one-line message."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            name = ctx.invoked_subcommand or "leakaudit"
            raise _Stopped(str(exc) or f"{name} interrupted (Ctrl-C) before it finished") from None


app = typer.Typer(
    name="leakaudit",
    help="Measure what a trained model leaks about its training data, and whether to publish it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_Group,
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


@app.command()
def datasets() -> None:
    """List every dataset: where its files were found, rows x columns, or why it is missing."""
    from .data import dataset_status

    with on_interrupt("datasets", doing="checking the dataset files"):
        for st in dataset_status():
            typer.echo(st.line())


@app.command()
def reproduce(
    name: Optional[str] = typer.Argument(None, help="Reproduction to run (see --list)."),
    list_: bool = typer.Option(False, "--list", metavar="", help="Print one reproduction name per line and exit (default: off)."),
    profile: str = typer.Option("reduced", "--profile", help="smoke (<1 min), reduced (default) or full (paper scale)."),
    out: Path = typer.Option(Path("reproductions"), "--out", help="Output folder for NAME.json and NAME.md."),
    seed: int = typer.Option(0, "--seed", help="Random seed (recorded in the JSON)."),
    gather: Optional[Path] = typer.Option(
        None, "--gather", help="Write one Markdown page from every NAME.json in --out to this file (default: none; "
                               "run NAME instead)."),
) -> None:
    """Reproduce a paper's table or figure and compare our numbers with the paper's."""
    from . import reproduce as rep

    rep.load_all()
    if list_:
        for n in rep.names():
            typer.echo(n)
        return
    if gather is not None:
        from .reproduce._registry import gather as _gather

        with on_interrupt("reproduce --gather", outputs=[gather], doing=f"reading {out}/*.json"):
            text = _gather(out)
        gather.write_text(text)
        typer.echo(f"wrote {gather} from {out}/*.json")
        return
    if name is None:
        raise LeakauditError("name a reproduction, or pass --list to see them")
    with on_interrupt(f"reproduce {name}", outputs=[out / f"{name}.json", out / f"{name}.md"],
                      doing=f"running the reproduction ({profile} profile)"):
        result = rep.run(name, profile=profile, out=out, random_state=seed)
    counts = {s: sum(r["status"] == s for r in result["rows"]) for s in ("match", "differs", "no-paper-value")}
    typer.echo(
        f"{name} ({profile}): {len(result['rows'])} rows, {counts['match']} match, {counts['differs']} differ, "
        f"{counts['no-paper-value']} without a paper value; {result['seconds']:.1f} s; wrote {out}/{name}.json"
    )


# Each of these modules defines ``register(app)`` adding its commands; a missing one is skipped.
_COMMAND_MODULES = (
    "leakaudit.audit.cli",
    "leakaudit.membership.cli",
    "leakaudit.dtp.cli",
    "leakaudit.attribute.cli",
    "leakaudit.property.cli",
    "leakaudit.mip.cli",
)


_registered = False


def _register_optional_commands() -> None:
    """Commands owned by later layers register themselves here (audit, membership, ...), once per process (each
    registration adds the commands to ``app`` again: in-process calls of ``main`` would grow it and slow down)."""
    global _registered
    if _registered:
        return
    _registered = True
    from importlib import import_module

    for mod in _COMMAND_MODULES:
        try:
            m = import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name and mod.startswith(exc.name):
                continue
            raise
        m.register(app)


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
            _register_optional_commands()
            # without standalone mode click returns a command's typer.Exit code instead of raising it
            rc = app(args=argv, standalone_mode=False)
    except _Stopped as exc:
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


if __name__ == "__main__":  # pragma: no cover
    # ``python -m leakaudit.cli``: run the imported module's main, the one the commands' on_interrupt reports to
    from leakaudit.cli import main as _main

    sys.exit(_main())
