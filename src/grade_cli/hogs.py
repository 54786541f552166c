"""CPU hogs for measuring under load: N busy-loop processes, started and stopped by one `with`.

`grade bench delivery --hogs 2` runs its measurement beside two of them, as two
`yes > /dev/null` would, so the documented measurement under load is one command and leaves
nothing running afterwards (the hogs are stopped even when the benchmark fails).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# A pure busy loop: no I/O, no memory growth, one core each.
_BUSY_LOOP = "while True:\n    pass\n"


@contextmanager
def cpu_hogs(count: int) -> Iterator[list[int]]:
    """Run `count` busy-loop processes for the duration of the block; yield their PIDs.

    Raises:
        ValueError: `count` is negative.
    """
    if count < 0:
        raise ValueError(f"hogs: {count} is negative; give 0 or more busy-loop processes")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _BUSY_LOOP],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
