"""Where the packaged assets are: robosuite's household-object meshes and its Panda arm model.

robosuite (MIT licence) is installed without its dependencies (`pip install --no-deps
robosuite==1.5.2`, done by `make setup`): only its asset files are read, the Python package is
never imported (importing it would pull numba, pynput and a GUI stack).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from grade_scenes.errors import AssetsMissingError

INSTALL_HINT = "pip install --no-deps robosuite==1.5.2 (make setup does it)"


def robosuite_assets() -> Path:
    """The `robosuite/models/assets` folder of the installed robosuite, without importing it.

    Raises:
        AssetsMissingError: robosuite is not installed (names the install command).
    """
    spec = importlib.util.find_spec("robosuite")
    if spec is None or not spec.submodule_search_locations:
        raise AssetsMissingError(f"robosuite is not installed; install it with: {INSTALL_HINT}")
    root = Path(next(iter(spec.submodule_search_locations))) / "models" / "assets"
    if not root.is_dir():
        raise AssetsMissingError(
            f"{root}: robosuite has no asset folder; reinstall: {INSTALL_HINT}"
        )
    return root


def resolve_mesh(reference: str, base: Path | None) -> Path:
    """A mesh path from an object-set entry: `robosuite:NAME` (robosuite's objects/meshes/NAME.stl)
    or a file path (relative to `base`, the object-set file's folder)."""
    if reference.startswith("robosuite:"):
        path = robosuite_assets() / "objects" / "meshes" / f"{reference.split(':', 1)[1]}.stl"
    else:
        path = Path(reference)
        if not path.is_absolute() and base is not None:
            path = base / path
    return path
