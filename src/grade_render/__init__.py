"""Offline path-traced re-rendering of recorded runs (Blender Cycles, `grade render`)."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_render.render": ("render_run", "RenderResult"),
    },
)
