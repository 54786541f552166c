"""Where a `grade bench slam --grade-table` OUT keeps what it stores of each sequence; the one
owner of those names for the table (grade_table) and the merge of tables (grade_table_merge).

    OUT/sequences/<sequence>.scenario.yaml   the scenario the sequence was made from
    OUT/sequences/<sequence>.json            its dynamic-pixel share and segmenter score
    OUT/results/<sequence>__<backend>__r<k>.json (+ .txt)   one scored run (and its trajectory)
    OUT/live/<sequence>__<backend>.json (+ .log)   one live run of --live-check (grade_table_live)
    OUT/live_check.md                        the live runs against the offline ones
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from grade_common.atomic import write_bytes
from grade_slam.errors import SlamError

RECORDS_DIR = "sequences"
RESULTS_DIR = "results"
SCENARIO_SUFFIX = ".scenario.yaml"
LIVE_DIR = "live"
LIVE_CHECK_MD = "live_check.md"
DEFAULT_LIVE_BACKENDS = ("orb_slam3_rgbd",)  # --live-check without backends


def scenario_text(scenario: dict[str, Any]) -> str:
    """A sequence's scenario as OUT records it."""
    text: str = yaml.safe_dump(scenario, sort_keys=True)
    return text


def result_stem(sequence: str, backend: str, repeat: int) -> str:
    """A scored run's file name without its suffix."""
    return f"{sequence}__{backend}__r{repeat}"


def result_pattern(sequence: str, backend: str) -> str:
    """The glob pattern of every repeat's result_stem of `backend` on `sequence`."""
    return f"{sequence}__{backend}__r*"


def read_json(path: Path) -> dict[str, Any]:
    """A record or result OUT stores (a JSON object).

    Raises:
        SlamError: the file holds something else.
    """
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise SlamError(f"{path}: not a result of this command; move it away and rerun")
    return data


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Store a record or result in OUT, whole (grade_common.atomic)."""
    write_bytes(path, (json.dumps(data, indent=1) + "\n").encode())
