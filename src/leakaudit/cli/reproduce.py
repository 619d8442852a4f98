"""``leakaudit reproduce``: run a paper's reproduction and compare our numbers with the paper's."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._typer import Command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``leakaudit reproduce`` to the command line."""

    @app.command(cls=Command)
    def reproduce(
        name: Optional[str] = typer.Argument(None, help="Reproduction to run (see --list)."),
        list_: bool = typer.Option(False, "--list", metavar="",
                                   help="Print one reproduction name per line and exit (default: off)."),
        profile: str = typer.Option("reduced", "--profile",
                                    help="smoke (<1 min), reduced (default) or full (paper scale)."),
        out: Path = typer.Option(Path("reproductions"), "--out", help="Output folder for NAME.json and NAME.md."),
        seed: int = typer.Option(0, "--seed", help="Random seed (recorded in the JSON)."),
        gather: Optional[Path] = typer.Option(
            None, "--gather", help="Write one Markdown page from every NAME.json in --out to this file (default: none; "
                                   "run NAME instead)."),
    ) -> None:
        """Reproduce a paper's table or figure and compare our numbers with the paper's."""
        from .. import reproduce as rep
        from .._interrupt import on_interrupt
        from ..exceptions import LeakauditError

        rep.load_all()
        if list_:
            for n in rep.names():
                typer.echo(n)
            return
        if gather is not None:
            from ..reproduce._registry import gather as _gather

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
