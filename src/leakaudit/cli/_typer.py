"""The click classes behind every ``leakaudit`` command: ``--help`` without a metavar, Ctrl-C carried past typer.

Every command passes ``cls=Command`` (``@app.command(cls=Command)``) and every group ``cls=Group``
(``typer.Typer(cls=Group)``); the top-level group is :class:`TopGroup`.
"""

from __future__ import annotations

from typer.core import TyperCommand, TyperGroup

__all__ = ["Command", "Group", "Stopped", "TopGroup"]


class _HelpWithoutMetavar:
    """``--help`` is a switch: no ``<bool>`` beside it in the help table, like our other switches (``metavar=""``).

    click builds the help option itself (``get_help_option``) and typer's rich help shows a flag's type as its
    metavar, so the switches we define set ``metavar=""`` and this sets the same on the help option.
    """

    def get_help_option(self, ctx):
        opt = super().get_help_option(ctx)
        if opt is not None:
            opt.metavar = ""  # click caches the option on the command: set once, seen by every later help page
        return opt


class Command(_HelpWithoutMetavar, TyperCommand):
    """A ``leakaudit`` command."""


class Group(_HelpWithoutMetavar, TyperGroup):
    """A group of ``leakaudit`` commands (``leakaudit dtp``, ``leakaudit mip``)."""


class Stopped(Exception):
    """A KeyboardInterrupt carried past typer, which would turn it into a silent exit 130."""


class TopGroup(Group):
    """The top-level group: Ctrl-C anywhere below it leaves as :class:`Stopped` with its one-line message."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            name = ctx.invoked_subcommand or "leakaudit"
            raise Stopped(str(exc) or f"{name} interrupted (Ctrl-C) before it finished") from None
