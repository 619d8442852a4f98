"""Ctrl-C in a command: one line saying what was running and which outputs were written (exit status 130).

The CLI's ``main`` installs :func:`on_sigint`, which counts every Ctrl-C; a command wraps its work in
:func:`on_interrupt`, so that a KeyboardInterrupt (or a Ctrl-C a library caught and swallowed, seen at the next
``step``) becomes :class:`CommandInterrupted` with that line. Kept below the paper packages so that their
``cli.py`` files can use it without importing the top-level command line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["CommandInterrupted", "Interruption", "on_interrupt", "on_sigint"]


class CommandInterrupted(KeyboardInterrupt):
    """Ctrl-C in a command; the message says what was running and what was written."""


#: SIGINTs seen by main()'s handler; a library that catches KeyboardInterrupt and carries on (scikit-learn's
#: MLPClassifier stops training and returns the half-trained model) cannot hide one from Interruption.step.
_sigints = 0


def on_sigint(signum, frame) -> None:
    """SIGINT handler installed by the CLI's main(): count the Ctrl-C, then raise KeyboardInterrupt as usual."""
    global _sigints
    _sigints += 1
    raise KeyboardInterrupt


def _file_state(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


class Interruption:
    """What a command is doing and which of its outputs it has written, for the line Ctrl-C prints.

    ``outputs``: the files the command writes (each atomically, so a file is either whole or untouched); at Ctrl-C
    those changed since the command started are named as written, the others as not written. ``cache``: an engine
    cache folder that keeps finished work.
    """

    def __init__(self, command: str, outputs: Sequence[Path | str] = (), cache: Path | str | None = None,
                 doing: str = "working"):
        self.command, self.outputs, self.cache, self.doing = command, [Path(p) for p in outputs], cache, doing
        self._before = [_file_state(p) for p in self.outputs]
        self._sigints = _sigints

    def step(self, doing: str) -> None:
        """Record what the command does now (a phrase after "while"); stop here if a Ctrl-C was swallowed."""
        self.check()
        self.doing = doing

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C was pressed since the command started, even if something caught it."""
        if _sigints != self._sigints:
            raise KeyboardInterrupt

    def message(self) -> str:
        parts = [f"{self.command} interrupted (Ctrl-C) while {self.doing}"]
        now = [_file_state(p) for p in self.outputs]
        done = [str(p) for p, a, b in zip(self.outputs, self._before, now) if b is not None and a != b]
        kept = [str(p) for p, a, b in zip(self.outputs, self._before, now) if b is not None and a == b]
        missing = [str(p) for p, b in zip(self.outputs, now) if b is None]
        if done:
            parts.append(f"wrote {', '.join(done)}")
        if missing:
            parts.append(f"not written: {', '.join(missing)}")
        if kept:
            parts.append(f"not written (an earlier run's copy is left unchanged): {', '.join(kept)}")
        if not self.outputs:
            parts.append("nothing was written")
        if self.cache is not None:
            parts.append(f"the models trained so far are kept in the engine cache {self.cache}: run the same "
                         "command to resume from them")
        return "; ".join(parts)


@contextlib.contextmanager
def on_interrupt(command: str, outputs: Sequence[Path | str] = (), cache: Path | str | None = None,
                 doing: str = "working") -> Iterator[Interruption]:
    """Turn Ctrl-C inside the block into :class:`CommandInterrupted` saying what ran and what was written.

    The block calls ``step("doing something")`` as it goes; a Ctrl-C that a library swallowed is raised at the
    next step, or when the block ends.
    """
    state = Interruption(command, outputs, cache, doing)
    try:
        yield state
        state.check()
    except CommandInterrupted:
        raise
    except KeyboardInterrupt:
        raise CommandInterrupted(state.message()) from None
