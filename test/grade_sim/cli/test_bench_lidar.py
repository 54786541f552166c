"""`grade bench lidar` runs on a short flight and prints every variant and both rates."""

from __future__ import annotations

import re

import pytest

from grade_sim.cli.bench_lidar import main

pytest.importorskip("embreex")


@pytest.mark.slow
def test_bench_lidar_prints_the_scan_against_bare_embree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--duration-s", "0.3", "--repeats", "2", "--preset", "vlp16"]) == 0
    out = capsys.readouterr().out
    assert "vlp16: 28800 rays per scan" in out
    ms = re.search(r"ours \(full scan\) ([\d.]+), our cast ([\d.]+), bare Embree ([\d.]+)", out)
    assert ms is not None
    assert all(float(v) > 0 for v in ms.groups())
    assert "with the people's poses" in out
    assert re.search(r"without lidar [\d.]+, with lidar [\d.]+", out)
