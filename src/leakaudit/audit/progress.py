"""What ``leakaudit audit`` shows on stderr while it runs: each stage, and the models trained of the total with an ETA.

Three modes. Silent (``--quiet``, or a library call that asks for none). On a terminal: a bold line per stage and,
while the engine trains models, a transient bar (models done of the total, elapsed time, time left) that is cleared
when the stage ends. Anywhere else (a log file, a pipe, CI): plain lines without colour or carriage returns, one when
a stage starts, one at most every ``interval`` seconds while models train (models done of the total, time so far,
time left), one when such a long batch ends, and one when the stage ends (its time and how many models it used).
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import IO, Iterator

__all__ = ["StageProgress"]


def _seconds(s: float) -> str:
    """A duration as people read it: '42 s', '3 min 5 s', '1 h 12 min'."""
    s = max(0, round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


class StageProgress:
    """Timing of each stage (``timings``) and progress lines on stderr.

    Parameters
    ----------
    verbose : bool
        False: nothing is printed (timings are still kept).
    stream : file object or None
        Where lines go (default ``sys.stderr``).
    tty : bool or None
        Whether ``stream`` is a terminal (default: ``stream.isatty()``); a terminal gets colour and a live bar,
        anything else plain lines.
    interval : float
        Off a terminal: at most one "models trained" line per this many seconds while a batch is training.
    hold_until : str or None
        The lines of the stages up to and including this one (reading the inputs: "target") are held back and
        printed, one line per stage, only once it has finished: a refused input then gives its one-line error alone
        on stderr, as every bad input does. None: every line is printed at once.

    Attributes
    ----------
    timings : dict of str -> float
        Seconds per finished (or interrupted) stage.
    current : str or None
        The stage running now (or the last one started).
    done : list of str
        The stages that finished.
    """

    def __init__(self, verbose: bool, *, stream: IO[str] | None = None, tty: bool | None = None,
                 interval: float = 10.0, hold_until: str | None = "target"):
        self.timings: dict[str, float] = {}
        self.current: str | None = None
        self.done: list[str] = []
        self.verbose = verbose
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.interval = interval
        self._console = None
        self._bar = None  # rich Progress while a batch trains (terminal only)
        self._task = None
        self._batch_t0 = 0.0
        self._last_line = 0.0
        self._models: dict[str, int] = {}  # models trained or read from the cache, per stage
        self._hold_until = hold_until
        self._held: list[tuple[str, str]] | None = [] if hold_until else None
        if verbose and self.tty:
            from rich.console import Console

            self._console = Console(file=self.stream, force_terminal=True)

    # -- output -------------------------------------------------------------------------------------------------
    def _plain(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def _line(self, rich_text: str, plain_text: str) -> None:
        if not self.verbose:
            return
        if self._held is not None:
            self._held.append((rich_text, plain_text))
            return
        if self._console is not None:
            self._console.print(rich_text, highlight=False)
        else:
            self._plain(plain_text)

    # -- stages -------------------------------------------------------------------------------------------------
    @contextmanager
    def stage(self, name: str, what: str) -> Iterator[None]:
        """Time the block as stage ``name`` (``what``: what it does, in words) and print its start and end."""
        t0 = time.perf_counter()
        held = self._held is not None
        if not held:
            self._line(f"[bold]{name}[/bold]: {what} ...", f"{name}: {what} ...")
        self.current = name
        try:
            yield
            self.done.append(name)
        finally:
            self._stop_bar()
            self.timings[name] = round(time.perf_counter() - t0, 3)
            if name in self.done:
                self.current = None  # between stages until the next one starts
                n = self._models.get(name)
                took = f"done in {self.timings[name]:.1f} s" + (f" ({n} models)" if n else "")
                if held:
                    self._line(f"[bold]{name}[/bold]: {what}: {took}", f"{name}: {what}: {took}")
                else:
                    self._line(f"  {name} {took}", f"  {name} {took}")
                if name == self._hold_until:
                    self._flush()
            elif held:
                self._held = []  # the inputs were refused: the error's one line says why

    def _flush(self) -> None:
        lines, self._held = self._held or [], None
        for rich_text, plain_text in lines:
            self._line(rich_text, plain_text)

    # -- models trained by the engine ---------------------------------------------------------------------------
    def on_models(self, done: int, total: int, description: str = "") -> None:
        """The engine's ``on_progress`` callback: ``done`` models of ``total`` (0 when a batch starts); models
        read from the cache count as done. ``description`` (the learner's class) is not shown."""
        if not self.verbose or total <= 0:
            return
        now = time.perf_counter()
        stage = self.current or "audit"
        if done == 0:
            self._batch_t0 = self._last_line = now
            if self._console is not None:
                self._start_bar(f"  {stage}: models", total)
            return
        if done >= total:
            self._models[stage] = self._models.get(stage, 0) + total
        elapsed = now - self._batch_t0
        if self._console is not None:
            if self._bar is not None:
                self._bar.update(self._task, completed=done, total=total)
            if done >= total:
                self._stop_bar()
            return
        if done >= total:
            if now - self._batch_t0 >= self.interval:  # a long batch: say it finished (short ones stay quiet)
                self._plain(f"  {stage}: {total}/{total} models ready in {_seconds(elapsed)}")
        elif now - self._last_line >= self.interval:
            left = elapsed / done * (total - done)
            self._plain(f"  {stage}: {done}/{total} models, {_seconds(elapsed)} so far, about "
                        f"{_seconds(left)} left")
            self._last_line = now

    def _start_bar(self, description: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        self._stop_bar()
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), TextColumn("elapsed,"), TimeRemainingColumn(), TextColumn("left"),
                             console=self._console, transient=True)
        self._task = self._bar.add_task(description, total=total)
        self._bar.start()

    def _stop_bar(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = self._task = None

    def attach(self, engine) -> None:
        """Route the engine's model counts here, and turn off its own bar (which would print on stdout)."""
        engine.progress = False
        engine.on_progress = self.on_models if self.verbose else None
