"""grade_batch: datasets at scale. `grade batch SPEC --out DIR` expands a sweep into jobs, runs
each job's pipeline (run -> noise -> replays -> exports) on a local process pool or on Ray,
keeps a resumable manifest, then builds the dataset (COCO/YOLO splits, card, eval tables)."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_batch.batch": ("run_batch", "BatchOutcome"),
    },
)
