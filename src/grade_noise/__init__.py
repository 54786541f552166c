"""grade_noise: sensor noise models, online as a node and offline on bags and files."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_noise.apply": ("apply_to_bag", "apply_to_tum", "ApplyResult"),
    },
)
