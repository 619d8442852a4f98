"""``leakaudit doctor``: which compiled training kernels run on this machine, and why any does not; which extras are
installed."""

from __future__ import annotations

import typer

from ._echo import echo
from ._typer import Command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``leakaudit doctor`` to the command line."""

    @app.command(cls=Command)
    def doctor() -> None:
        """Say which compiled kernels (forest, MLP, per-example SGD, DP-SGD and its audit canaries) run here, their CPU
        variant, and why not; and which optional extras (torch, lm, dp, ray, text, parquet, xgboost, lightgbm) are installed."""
        import platform

        from .._version import __version__
        from .._extras import EXTRAS, installed
        from .._interrupt import on_interrupt
        from ..learners.kernels import kernel_status

        with on_interrupt("doctor", doing="opening the compiled kernels"):
            statuses = kernel_status()
        echo(f"leakaudit {__version__}, Python {platform.python_version()}, {platform.machine()}")
        if statuses:
            echo(f"CPU: {statuses[0].cpu}")
        for s in statuses:
            line = f"  {s.kernel}: {s.variant} ({s.implementation})"
            if s.reason:
                line += f"; {s.reason}"
            echo(line)
        echo("extras (pip install 'leakaudit[EXTRA]'):")
        for extra in dict.fromkeys(e for _, e in EXTRAS.values()):
            missing = [dist for module, (dist, e) in EXTRAS.items() if e == extra and not installed(module)]
            echo(f"  {extra}: " + (f"missing {', '.join(missing)}" if missing else "installed"))
