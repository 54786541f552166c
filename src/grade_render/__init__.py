"""Offline path-traced re-rendering of recorded runs (Blender Cycles, `grade render`)."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "render_run": "grade_render.render",
    "RenderResult": "grade_render.render",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
