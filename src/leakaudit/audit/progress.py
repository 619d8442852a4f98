"""What ``leakaudit audit`` shows on stderr while it runs: each stage, and the models trained of the whole audit's
total with the time left.

Four modes. Silent (``--quiet``, or a library call that asks for none). On a terminal: a bold line per stage and,
while the engine trains a stage's models, a transient bar (the stage's models done of its total, elapsed time, time
left, and the whole audit's count and time left) that is cleared when the stage ends. In a notebook (an IPython
kernel): a plain line per stage and, while it trains models, tqdm's bar (``tqdm.auto``: a widget with ipywidgets,
else text), closed when the stage ends. Anywhere else (a log file, a pipe, CI; a notebook without tqdm): plain lines
without colour or carriage returns, one when a stage starts, one at most every ``interval`` seconds while it trains
models (however many batches the engine runs them in), and one when it ends (its time and how many models it used).

The whole audit's total is an estimate: the plan tells, before any analysis runs, about how many models each will
train (:meth:`StageProgress.expect`, from :attr:`leakaudit.audit.plan.Step.models`); what an analysis decides to
train as it goes (the records it re-measures, the removal analysis) joins the total when the engine announces it. The
time left is the time per model times the models left, recomputed at every line: the time per model is the pace so far,
which starts from ``per_model`` (the estimate's timed fits, :mod:`leakaudit.audit.estimate`) where the audit gives one.
A printed line never repeats its last time left while the total grew since: a plan that grows as fast as its models
train would say the same time left line after line, so it says how many models joined instead.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from typing import IO, Iterator

from .._text import escape_controls

__all__ = ["StageProgress", "about", "duration", "in_notebook"]


def in_notebook() -> bool:
    """Whether this process is a notebook's kernel (IPython's ZMQ shell, as Jupyter and VS Code run it)."""
    ipython = sys.modules.get("IPython")
    return ipython is not None and type(ipython.get_ipython()).__name__ == "ZMQInteractiveShell"


def duration(s: float) -> str:
    """A duration as people read it: '42 s', '3 min 5 s', '1 h 12 min'."""
    s = max(0, round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def about(s: float) -> str:
    """A duration estimated: 'about 3 min 5 s', or 'under 1 s'."""
    return f"about {duration(s)}" if s >= 0.5 else "under 1 s"


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
        Off a terminal: at most one "models trained" line per this many seconds while a stage trains models (the
        engine's batches within a stage do not start a line of their own).
    hold_until : str or None
        The lines of the stages up to and including this one (reading the inputs: "target") are held back and
        printed, one line per stage, only once it has finished: a refused input then gives its one-line error alone
        on stderr, as every bad input does. None: every line is printed at once.
    clock : callable, default=time.perf_counter
        Seconds, for the times shown (a test may give its own).
    per_model : float or None
        Seconds a model is estimated to take before any has trained (:mod:`leakaudit.audit.estimate`): the time left
        starts from it and moves to the pace measured as models train (it counts as 8 models trained at that pace).

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
                 interval: float = 10.0, hold_until: str | None = "target",
                 clock: Callable[[], float] = time.perf_counter, per_model: float | None = None):
        self.timings: dict[str, float] = {}
        self.current: str | None = None
        self.done: list[str] = []
        self.verbose = verbose
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.interval = interval
        self._clock = clock
        self.per_model = per_model
        self._said: dict[str, tuple[int, str]] = {}  # per printed line's scope: its last total and time left
        self._console = None
        self._bar = None  # rich Progress (a terminal) or a tqdm bar (a notebook) while a stage trains
        self._tqdm = None  # tqdm.auto's bar class in a notebook
        self._task = None
        self._t0: float | None = None  # when the first stage started
        self._t_models: float | None = None  # when the planned analyses started (the models' clock)
        self._stage_t0 = 0.0
        self._last_line = 0.0
        self._models: dict[str, int] = {}  # models of finished batches (trained or read from the cache), per stage
        self._expected: dict[str, int] = {}  # models each stage is expected to train (its count once finished)
        self._batch = (0, 0)  # the running batch: models done, of its total
        self._hold_until = hold_until
        self._held: list[tuple[str, str]] | None = [] if hold_until else None
        if verbose and self.tty:
            from rich.console import Console

            self._console = Console(file=self.stream, force_terminal=True)
        elif verbose and in_notebook():
            try:
                from tqdm.auto import tqdm as bar
            except ImportError:  # no tqdm: plain lines
                bar = None
            self._tqdm = bar

    # -- output -------------------------------------------------------------------------------------------------
    def _plain(self, line: str) -> None:
        print(escape_controls(line), file=self.stream, flush=True)

    def _line(self, rich_text: str, plain_text: str) -> None:
        if not self.verbose:
            return
        rich_text = escape_controls(rich_text)  # (a name with a right-to-left override shows as it is)
        if self._held is not None:
            self._held.append((rich_text, plain_text))
            return
        if self._console is not None:
            self._console.print(rich_text, highlight=False)
        else:
            self._plain(plain_text)

    # -- the whole audit ----------------------------------------------------------------------------------------
    def expect(self, models: Mapping[str, int]) -> None:
        """About how many models each stage named in ``models`` will train (0: none, or it does not run); a later
        call replaces a stage's estimate. The first call starts the clock the time left is estimated from."""
        if self._t_models is None:
            self._t_models = self._clock()
        for stage, n in models.items():
            if stage not in self.done:
                self._expected[stage] = max(0, int(n))

    def _stage_counts(self, stage: str) -> tuple[int, int]:
        """(models done, models known or expected) of ``stage``."""
        running = stage == self.current
        done = self._models.get(stage, 0) + (self._batch[0] if running else 0)
        known = self._models.get(stage, 0) + (self._batch[1] if running else 0)
        return done, known if stage in self.done else max(self._expected.get(stage, 0), known)

    def audit_counts(self) -> tuple[int, int]:
        """(models done, about how many the whole audit trains): the finished stages' counts, the running stage's
        and the estimates of the stages to come."""
        stages = set(self._expected) | set(self._models) | ({self.current} if self.current else set())
        counts = [self._stage_counts(s) for s in stages]
        return sum(d for d, _ in counts), sum(t for _, t in counts)

    def _left(self, done: int, total: int, since: float | None, now: float, said: str | None = None) -> str | None:
        """The time left, the time per model (the pace of ``done`` models since ``since``, from ``per_model`` where
        given) times the models left, in words ('about 2 min 5 s left', 'under 1 s left'); None before any model
        without ``per_model``. ``said``: the printed line's scope, whose last time left is not repeated once the
        total has grown (the models that joined are said instead)."""
        prior = 8 if self.per_model is not None else 0
        if since is None or done + prior <= 0 or total <= done:
            return None
        words = f"{about((now - since + prior * (self.per_model or 0)) / (done + prior) * (total - done))} left"
        if said is not None:
            last_total, last = self._said.get(said, (total, ""))
            self._said[said] = total, words
            if total > last_total and words == last:
                return f"{total - last_total:,} more models planned since the last line"
        return words

    def _audit_words(self, now: float, said: str | None = None) -> str:
        """'audit: 704 of about 1,400 models, 1 min 8 s so far, about 1 min left' ('' when no model is expected)."""
        done, total = self.audit_counts()
        if total <= 0:
            return ""
        so_far = duration(now - (self._t0 if self._t0 is not None else now))
        if done >= total:
            return f"audit: {done:,} models, {so_far} so far"
        left = self._left(done, total, self._t_models, now, said)
        return f"audit: {done:,} of about {total:,} models, {so_far} so far" + (f", {left}" if left else "")

    def note(self, text: str) -> None:
        """One line that is not a stage's (``note: text``), among the progress lines; held with them until the
        inputs are accepted."""
        from rich.markup import escape

        self._line(f"[bold]note[/bold]: {escape(text)}", f"note: {text}")

    # -- stages -------------------------------------------------------------------------------------------------
    @contextmanager
    def stage(self, name: str, what: str, *, skip: str | None = None) -> Iterator[None]:
        """Time the block as stage ``name`` (``what``: what it does, in words) and print its start and end.

        ``skip``: the setting that skips this stage, in words (e.g. ``"removal=False, --no-removal"``): its end line
        then says the stage's share of the audit's time so far, so the user knows what skipping it saves."""
        t0 = self._clock()
        if self._t0 is None:
            self._t0 = t0
        held = self._held is not None
        if not held:
            self._line(f"[bold]{name}[/bold]: {what} ...", f"{name}: {what} ...")
        self.current = name
        self._stage_t0 = self._last_line = t0
        self._batch = (0, 0)
        try:
            yield
            self.done.append(name)
        finally:
            self._stop_bar()
            now = self._clock()
            self.timings[name] = round(now - t0, 3)
            self._batch = (0, 0)
            if name in self.done:
                self.current = None  # between stages until the next one starts
                n = self._models.get(name, 0)
                self._expected[name] = n  # its estimate becomes its count
                took = f"done in {self.timings[name]:.1f} s" + (f" ({n:,} models)" if n else "")
                if skip and now > self._t0:
                    share = self.timings[name] / (now - self._t0)
                    took += f", {share:.0%} of the audit's time so far ({skip} skips it)"
                if held:
                    self._line(f"[bold]{name}[/bold]: {what}: {took}", f"{name}: {what}: {took}")
                else:
                    audit = self._audit_words(now, "audit")
                    tail = f"; {audit}" if audit else ""
                    self._line(f"  {name} {took}{tail}", f"  {name} {took}{tail}")
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
        """The engine's ``on_progress`` callback: ``done`` models of ``total`` in one batch (0 when a batch starts);
        models read from the cache count as done. ``description`` (the learner's class) is not shown. A stage may
        run many batches: its lines count the stage's models and the whole audit's, never one batch's."""
        if not self.verbose or total <= 0:
            return
        now = self._clock()
        stage = self.current or "audit"
        if self._t_models is None:
            self._t_models = now
        if done >= total:  # the batch is finished: its models join the stage's
            self._models[stage] = self._models.get(stage, 0) + total
            self._batch = (0, 0)
        else:
            self._batch = (done, total)
        s_done, s_total = self._stage_counts(stage)
        if self._tqdm is not None:
            if self._bar is None:
                self._bar = self._tqdm(total=s_total, desc=f"{stage}: models", file=self.stream, leave=False)
            self._bar.total, self._bar.n = max(s_total, s_done), s_done
            self._bar.set_postfix_str(self._audit_words(now))  # (it refreshes the bar)
            return
        if self._console is not None:
            if self._bar is None:
                self._start_bar(f"  {stage}: models", s_total)
            self._bar.update(self._task, completed=s_done, total=max(s_total, s_done),
                             audit=self._audit_words(now))
            return
        if done > 0 and now - self._last_line >= self.interval:
            left = self._left(s_done, s_total, self._stage_t0, now, f"stage {stage}")
            audit = self._audit_words(now, "audit")
            self._plain(f"  {stage}: {s_done:,}/{s_total:,} models, {duration(now - self._stage_t0)} so far"
                        + (f", {left}" if left else "") + (f"; {audit}" if audit else ""))
            self._last_line = now

    def _start_bar(self, description: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        self._stop_bar()
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), TextColumn("elapsed,"), TimeRemainingColumn(), TextColumn("left;"),
                             TextColumn("{task.fields[audit]}"), console=self._console, transient=True)
        self._task = self._bar.add_task(description, total=total, audit="")
        self._bar.start()

    def _stop_bar(self) -> None:
        if self._bar is not None:
            (self._bar.close if self._tqdm is not None else self._bar.stop)()
            self._bar = self._task = None

    def attach(self, engine) -> None:
        """Route the engine's model counts here, and turn off its own bar (which would print on stdout)."""
        engine.progress = False
        engine.on_progress = self.on_models if self.verbose else None
