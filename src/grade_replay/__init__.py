"""grade_replay: exact experiment replay, clock re-indexing and bag tools."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_replay.replay": (
            "replay_run",
            "ReplayConfig",
            "ReplayMode",
            "ReplayResult",
            "load_run",
        ),
        "grade_replay.changes": ("ReplayChanges",),
    },
)
