"""The benchmark's worlds (GRADE's static / people / people + flying objects axis) and where
its runs go: shared by the offline `grade bench slam` and its `--live` variant."""

from __future__ import annotations

import contextlib
import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# world name -> (people, flying objects)
WORLDS: dict[str, tuple[int, int]] = {
    "static": (0, 0),
    "people": (8, 0),
    "people+flying": (8, 3),
}
# How sim_node paces a live run: waiting for each frame's ack, or keeping wall-clock time.
PACINGS = ("lockstep", "realtime")


def bench_scenario(
    base: dict[str, Any],
    world: str,
    seed: int,
    duration_s: float,
    size: tuple[int, int],
    streams: tuple[str, ...] = ("rgb", "depth"),
) -> dict[str, Any]:
    """The default scenario with this world's actors, seed, duration, camera size and streams."""
    data = copy.deepcopy(base)
    people, flying = WORLDS[world]
    data.update(seed=seed, duration_s=duration_s, realtime=False)
    data["people"]["count"] = people
    data["flying_objects"]["count"] = flying
    camera = data["robots"][0]["cameras"][0]
    camera.update(width=size[0], height=size[1], rate_hz=30.0, streams=list(streams))
    data["record"] = {"bag": False, "ground_truth": True, "experiment_record": False}
    return data


@contextlib.contextmanager
def work_dir(keep: Path | None, prefix: str) -> Iterator[Path]:
    """Where the runs go: the new folder `keep` (kept), else a temporary one (removed)."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=False)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)
