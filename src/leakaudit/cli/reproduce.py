"""``leakaudit reproduce``: run a paper's reproduction and compare our numbers with the paper's."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._echo import echo
from ._typer import Command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``leakaudit reproduce`` to the command line."""

    @app.command(cls=Command)
    def reproduce(
        name: Optional[str] = typer.Argument(None, help="Reproduction to run (see --list)."),
        list_: bool = typer.Option(False, "--list", metavar="",
                                   help="Print one reproduction name per line and exit (default: off)."),
        profile: Optional[str] = typer.Option(None, "--profile",
                                              help="smoke (<1 min), reduced (default) or full (paper scale)."),
        out: Path = typer.Option(Path("reproductions"), "--out", help="Output folder for NAME.json and NAME.md."),
        seed: int = typer.Option(0, "--seed", help="Random seed (recorded in the JSON)."),
        gather: Optional[Path] = typer.Option(
            None, "--gather", help="Write one Markdown page from every NAME.json in --out to this file, and rewrite "
                                   "each NAME.md as it appears there (default: none; run NAME instead)."),
        all_: bool = typer.Option(
            False, "--all", metavar="",
            help="Run every reproduction at its page profile (full where the paper's scale fits in about an hour on "
                 "2 cores, else reduced; --profile is not used) into --out, keeping the runs stored there at each "
                 "reproduction's current experiment version; with --gather, then write the page (default: off)."),
        jobs: int = typer.Option(
            1, "--jobs",
            help="With --all: how many reproductions run at once, each in its own process, the longest first; their "
                 "values are the same as one at a time (LEAKAUDIT_REPRODUCE_JOBS runs each one's seeds in that many "
                 "processes besides) (default: 1)."),
    ) -> None:
        """Reproduce a paper's table or figure and compare our numbers with the paper's."""
        from .. import reproduce as rep
        from .._interrupt import on_interrupt
        from ..exceptions import LeakauditError

        rep.load_all()
        if list_:
            for n in rep.names():
                echo(n)
            return
        if jobs < 1:
            raise LeakauditError(f"--jobs must be at least 1; got {jobs}")
        if jobs != 1 and not all_:
            raise LeakauditError("--jobs runs reproductions side by side and needs --all: drop --jobs, or add --all")
        if all_:
            if name is not None:
                raise LeakauditError(f"--all runs every reproduction: drop the name {name!r}, or drop --all")
            if profile is not None:
                raise LeakauditError("--all runs each reproduction at its page profile: drop --profile, or drop --all")
            from ..reproduce import run_all

            started: set[str] = set()

            def progress(n: str, prof: str, result: dict | None) -> None:
                if result is None:
                    started.add(n)
                    echo(f"{n}: running at {prof} ...")
                else:
                    kept = "" if n in started else " (kept: stored at the current experiment version)"
                    echo(f"{n} ({prof}): {_counts_text(result)}{kept}")

            out.mkdir(parents=True, exist_ok=True)
            with on_interrupt("reproduce --all", outputs=[], doing=f"running every reproduction into {out} (the "
                              "finished ones are kept: run the same command again to go on)"):
                run_all(out, random_state=seed, progress=progress, jobs=jobs)
        if gather is not None:
            from ..reproduce import gather as _gather

            from .._results import write_text_atomic

            with on_interrupt("reproduce --gather", outputs=[gather], doing=f"reading {out}/*.json"):
                text = _gather(out, write_sections=True)
                write_text_atomic(gather, text)  # the page whole or as it was
            echo(f"wrote {gather} from {out}/*.json")
            return
        if all_:
            return
        if name is None:
            raise LeakauditError("name a reproduction, or pass --list to see them")
        profile = profile or "reduced"
        with on_interrupt(f"reproduce {name}", outputs=[out / f"{name}.json", out / f"{name}.md"],
                          doing=f"running the reproduction ({profile} profile)"):
            result = rep.run(name, profile=profile, out=out, random_state=seed)
        echo(f"{name} ({profile}): {_counts_text(result)}; wrote {out}/{name}.json")


def _counts_text(result: dict) -> str:
    """"N rows, a match, b differ, c without a paper value; S s" for one run, with the other statuses where any row
    has them (inconclusive, beats the paper, not compared, reference dropped)."""
    from ..reproduce import STATUSES

    counts = {s: sum(r["status"] == s for r in result["rows"]) for s in STATUSES}
    other = [f"{counts[s]} {s}" for s in STATUSES if s not in ("match", "differs", "no-paper-value") and counts[s]]
    return (f"{len(result['rows'])} rows, {counts['match']} match, {counts['differs']} differ, "
            f"{counts['no-paper-value']} without a paper value" + "".join(f", {o}" for o in other)
            + f"; {result['seconds']:.1f} s")
