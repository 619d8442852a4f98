"""A rich progress bar that shows itself only for runs longer than a few seconds, on a terminal."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

__all__ = ["ProgressBar"]


class ProgressBar:
    """Counts models done out of ``total`` with a bar, rate and ETA.

    Parameters
    ----------
    total : int
    description : str
    enabled : bool or None
        None: shown only when stdout is a terminal. False: never. True: always.
    delay : float
        Seconds before the bar appears (runs shorter than this stay silent).
    callback : callable or None
        Called as ``callback(completed, total, description)`` once at the start and after every advance,
        whether or not the bar is shown.
    """

    def __init__(self, total: int, description: str, enabled: bool | None = None, delay: float = 2.0,
                 callback: Callable[[int, int, str], None] | None = None):
        self.total = total
        self.completed = 0
        self.callback = callback
        self.enabled = sys.stdout.isatty() if enabled is None else bool(enabled)
        self._lock = threading.Lock()
        self._progress = None
        self._task = None
        self._closed = False
        self._timer = None
        self.description = description
        if callback is not None:
            callback(0, total, description)
        if self.enabled and total > 0:
            self._timer = threading.Timer(delay, self._start)
            self._timer.daemon = True
            self._timer.start()

    def _start(self) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        with self._lock:
            if self._closed or self._progress is not None:
                return
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("models"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                transient=False,
            )
            self._task = self._progress.add_task(self.description, total=self.total, completed=self.completed)
            self._progress.start()

    @property
    def shown(self) -> bool:
        return self._progress is not None

    def advance(self, n: int) -> None:
        with self._lock:
            self.completed += n
            if self._progress is not None:
                self._progress.update(self._task, completed=self.completed)
            completed = self.completed
        if self.callback is not None:
            self.callback(completed, self.total, self.description)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._progress is not None:
                self._progress.update(self._task, completed=self.completed)
                self._progress.stop()
