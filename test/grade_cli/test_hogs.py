"""cpu_hogs: the busy-loop processes of `grade bench delivery --hogs N` run inside the block
and none is left afterwards, also when the block fails."""

from __future__ import annotations

import os

import pytest

from grade_cli.hogs import cpu_hogs


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_hogs_run_inside_the_block_and_are_gone_after_a_failure() -> None:
    seen: list[int] = []

    def measure() -> None:
        with cpu_hogs(2) as pids:
            seen.extend(pids)
            assert all(_alive(p) for p in pids)
            raise RuntimeError("benchmark failed")

    with pytest.raises(RuntimeError, match="benchmark failed"):
        measure()
    assert len(seen) == 2
    assert not any(_alive(p) for p in seen)  # killed and reaped


def test_zero_hogs_is_nothing_and_a_negative_count_is_refused() -> None:
    with cpu_hogs(0) as pids:
        assert pids == []
    with pytest.raises(ValueError, match="-1 is negative"), cpu_hogs(-1):
        pass
