"""grade_noise: sensor noise models, online as a node and offline on bags and files."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "apply_to_bag": "grade_noise.apply",
    "apply_to_tum": "grade_noise.apply",
    "ApplyResult": "grade_noise.apply",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
