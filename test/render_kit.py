"""Whether Blender's bpy is installed for the tests that render with it (`make setup-render`)."""

from __future__ import annotations

import pytest

from grade_render.errors import RenderSetupError
from grade_render.worker_process import blender_python


def bpy_available() -> bool:
    try:
        blender_python()
    except RenderSetupError:
        return False
    return True


needs_bpy = pytest.mark.skipif(
    not bpy_available(), reason="bpy is not installed: run `make setup-render`"
)
