"""grade_replay: exact experiment replay, clock re-indexing and bag tools."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "replay_run": "grade_replay.replay",
    "ReplayConfig": "grade_replay.replay",
    "ReplayMode": "grade_replay.replay",
    "ReplayResult": "grade_replay.replay",
    "load_run": "grade_replay.replay",
    "ReplayChanges": "grade_replay.changes",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
