"""``leakaudit doctor``: which compiled training kernels run on this machine, and why any does not."""

from __future__ import annotations

import typer

from ._typer import Command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``leakaudit doctor`` to the command line."""

    @app.command(cls=Command)
    def doctor() -> None:
        """Say which compiled kernels (forest, MLP, per-example SGD, DP-SGD and its audit canaries) run here, their CPU
        variant, and why not."""
        import platform

        from .. import __version__
        from .._interrupt import on_interrupt
        from ..learners.kernels import kernel_status

        with on_interrupt("doctor", doing="opening the compiled kernels"):
            statuses = kernel_status()
        typer.echo(f"leakaudit {__version__}, Python {platform.python_version()}, {platform.machine()}")
        if statuses:
            typer.echo(f"CPU: {statuses[0].cpu}")
        for s in statuses:
            line = f"  {s.kernel}: {s.variant} ({s.implementation})"
            if s.reason:
                line += f"; {s.reason}"
            typer.echo(line)
