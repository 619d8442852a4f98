"""The click classes behind every ``leakaudit`` command: ``--help`` without a metavar, Ctrl-C carried past typer.

Every command passes ``cls=Command`` (``@app.command(cls=Command)``) and every group ``cls=Group``
(``typer.Typer(cls=Group)``); the top-level group is :class:`TopGroup`.
"""

from __future__ import annotations

from typer.core import TyperCommand, TyperGroup

__all__ = ["Command", "Group", "Stopped", "TopGroup", "not_given"]


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


def not_given(flag: str, help: str, *, default: str = "none", **kwargs):
    """An option that defaults to None (not given), its help ending in what that means: ``[default: none]``, or
    ``default``'s words."""
    import typer

    return typer.Option(None, flag, help=f"{help} [default: {default}]", **kwargs)


class Stopped(Exception):
    """A KeyboardInterrupt carried past typer, which would turn it into a silent exit 130."""


class TopGroup(Group):
    """The top-level group: Ctrl-C anywhere below it leaves as :class:`Stopped` with its one-line message.

    Its commands are registered when first used: ``lazy`` maps each command's name to the module whose
    ``register(app)`` adds it, in the order of ``leakaudit --help``. Running a command registers its module
    only; ``leakaudit --version`` registers none, and ``leakaudit --help`` lists a command from its module's ``HELP``
    (``{name: help text}``) where the module has one, without registering it (a module whose help texts list
    registered names, datasets or learners, would otherwise import them and the numerical stack with them).
    Reading :attr:`commands` registers them all.
    """

    lazy: dict = {}

    @property
    def commands(self) -> dict:
        for name in self.lazy:
            self._real(name)
        return self.__dict__["_loaded"]

    @commands.setter
    def commands(self, value) -> None:
        self.__dict__["_loaded"] = dict(value or {})

    def _real(self, name: str):
        """The command ``name``, registering its module's commands first if they are not yet."""
        loaded = self.__dict__["_loaded"]
        if name not in loaded and name in self.lazy:
            import typer

            sub = typer.Typer()
            self.lazy[name].register(sub)
            loaded.update(typer.main.get_group(sub).commands)
        return loaded.get(name)

    def list_commands(self, ctx) -> list[str]:
        return list(dict.fromkeys([*self.lazy, *self.__dict__["_loaded"]]))

    def get_command(self, ctx, cmd_name: str):
        loaded = self.__dict__["_loaded"]
        if cmd_name in loaded or cmd_name not in self.lazy:
            return loaded.get(cmd_name)
        summary = getattr(self.lazy[cmd_name], "HELP", {}).get(cmd_name)
        if summary is not None:  # listed by --help, not run: its help text without registering its module
            return Command(name=cmd_name, help=summary)
        return self._real(cmd_name)

    def resolve_command(self, ctx, args):
        if args:
            self._real(args[0])
        return super().resolve_command(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            name = ctx.invoked_subcommand or "leakaudit"
            raise Stopped(str(exc) or f"{name} interrupted (Ctrl-C) before it finished") from None
