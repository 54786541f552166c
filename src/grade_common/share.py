"""Files shipped with the grade package (config/, launch/): from the installed share folder in
a sourced ROS 2 environment, else from the source tree next to src/."""

from __future__ import annotations

from pathlib import Path


def shipped_file(relative: str) -> Path:
    """A shipped file, e.g. `config/indoor_uav.yaml` (the path may not exist)."""
    try:
        from ament_index_python.packages import get_package_share_directory

        path = Path(get_package_share_directory("grade")) / relative
        if path.exists():
            return path
    except Exception:  # not in a sourced ROS 2 environment: the source tree is next to src/
        pass
    return Path(__file__).resolve().parents[2] / relative
