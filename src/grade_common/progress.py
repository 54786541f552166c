"""The step progress bar of the commands that simulate: `grade run` and `grade replay`.

It lives on the floor (grade_common) because both packages' commands show it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def step_bar(desc: str, *, quiet: bool = False) -> Iterator[Callable[[int, int], None]]:
    """A bar on stderr over a run's physics steps, closed on leaving (also when cut short).

    Yields the `progress(step, total)` callback that `run_scenario` and `replay_run` take: the
    total is the run's step count, known only once the scene is built, so each call sets it.

    Args:
        desc: the bar's label (e.g. "simulating").
        quiet: no bar at all (`--quiet`).
    """
    bar = tqdm(total=1, unit="step", desc=desc, disable=quiet, file=sys.stderr)

    def progress(step: int, total: int) -> None:
        bar.total = total
        bar.update(step - bar.n)

    try:
        yield progress
    finally:
        bar.close()
