"""Progress of long command-line work: a tqdm bar on a terminal, plain lines otherwise.

Commands that run work in-process (``import_corpus``, ``align --now``, ``train_aligner --now``,
``export``, ``score_pairs --now``) show it with :class:`CommandProgress`, fed by the same
``progress(fraction, message)`` reports the services write to their job or run rows: passed in
directly where a service takes a ``progress`` callback, or heard through
:func:`annotation.services.background.progress.observed` for work that reports to its own row.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TextIO

from django.core.management.base import CommandError
from django.db.models import Model

from annotation.services.background import progress as background_progress


class CommandProgress:
    """``progress(fraction, message)`` for a command's output.

    On a terminal: a tqdm bar (percent done, the latest message). Otherwise (a pipe, a log file,
    a test's StringIO): a line ``<what>: 40% <message>`` the first time another ``step`` percent is
    done — at most one line per step however often the message changes (a training's message
    changes with every batch) — and a last line at 100% on :meth:`close`.
    """

    def __init__(self, out, what: str, *, tty: bool | None = None, step: float = 10.0):
        self.stream: TextIO = getattr(out, "_out", out)  # Django's OutputWrapper wraps the real stream
        self.what = what
        self.tty = bool(tty if tty is not None else _isatty(self.stream))
        self.step = step
        self.bar = None
        self.lines = 0
        self._bucket = -1

    def __call__(self, fraction: float, message: str = "") -> None:
        percent = round(100.0 * max(0.0, min(1.0, float(fraction))), 1)
        if self.tty:
            self._bar_update(percent, message)
            return
        bucket = int(percent // self.step)
        if bucket > self._bucket:
            self._bucket = bucket
            self.lines += 1
            self.stream.write(f"{self.what}: {percent:.0f}%" + (f" {message}" if message else "") + "\n")
            self.stream.flush()

    def _bar_update(self, percent: float, message: str) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=100.0, desc=self.what, file=self.stream, unit="%", dynamic_ncols=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}] {postfix}")
        self.bar.update(max(0.0, percent - self.bar.n))
        if message:
            self.bar.set_postfix_str(message[:60], refresh=False)
        self.bar.refresh()

    def row(self, model: type[Model], pk: int):
        """A callback for :func:`~annotation.services.background.progress.observed` showing only the
        reports of one job or run row."""

        def observer(reported: type[Model], reported_pk: int, fraction: float, message: str) -> None:
            if reported is model and reported_pk == pk:
                self(fraction, message)

        return observer

    def close(self, *, done: bool = True) -> None:
        """End the display (the bar at 100% when ``done``); the command prints its summary next."""
        if self.bar is not None:
            if done:
                self.bar.update(max(0.0, 100.0 - self.bar.n))
            self.bar.close()
            self.bar = None
        elif done and not self.tty and self._bucket < int(100 // self.step):
            self(1.0, "done")


@contextlib.contextmanager
def showing(out, what: str, *, tty: bool | None = None) -> Iterator[CommandProgress]:
    """A :class:`CommandProgress` closed at the end of the block (at 100% unless the block raised)."""
    display = CommandProgress(out, what, tty=tty)
    try:
        yield display
    except BaseException:
        display.close(done=False)
        raise
    display.close()


@contextlib.contextmanager
def showing_row(out, what: str, model: type[Model], pk: int, *, tty: bool | None = None) -> Iterator[CommandProgress]:
    """:func:`showing` fed by the progress reports of one job or run row that this process runs."""
    with showing(out, what, tty=tty) as display, background_progress.observed(display.row(model, pk)):
        yield display


def run_here(out, what: str, row: Model, work: Callable[[int], None], *, failed: str) -> Model:
    """Run a queued row's work (``work(pk)``) in this process with its progress shown; the row afterwards.

    Raises:
        CommandError: ``"<failed> failed: <why>"`` (the row holds the details).
    """
    try:
        with showing_row(out, what, type(row), row.pk):
            work(row.pk)
    except Exception as exc:  # noqa: BLE001 - the row holds the details
        raise CommandError(f"{failed} failed: {exc}") from exc
    return type(row).objects.get(pk=row.pk)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
