"""Fixtures of the sim_node tests: `grade launch` subprocesses and an rclpy observer node."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sim_node_support import grade_launch

from process_support import CollectedProcess


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[[str, list[str]], CollectedProcess]]:
    """Factory starting `grade launch`; every process still running at the end is interrupted."""
    started: list[CollectedProcess] = []

    def start(launch_file: str, args: list[str]) -> CollectedProcess:
        proc = grade_launch(launch_file, args, tmp_path)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.popen.poll() is None:
            proc.interrupt()
