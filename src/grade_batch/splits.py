"""Train/val/test splits of a batch by whole sequence, and the counts of each split.

Below both the dataset writer (grade_batch.dataset), which makes the splits, and the card
(grade_batch.card), which shows their counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grade_batch.spec import SweepFile

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class SplitStats:
    """Counts of one split."""

    sequences: int
    images: int
    instances_per_category: dict[str, int]


def assign_splits(job_ids: list[str], spec: SweepFile) -> dict[str, str]:
    """Whole sequences into splits: a seeded shuffle, then the first round(train * n) to train,
    the next round(val * n) to val, the rest to test."""
    splits = spec.sweep.splits
    order = sorted(job_ids)
    rng = np.random.default_rng(splits.seed)
    shuffled = [order[i] for i in rng.permutation(len(order))]
    n_train = round(splits.train * len(order))
    n_val = min(round(splits.val * len(order)), len(order) - n_train)
    out = {}
    for i, job_id in enumerate(shuffled):
        out[job_id] = "train" if i < n_train else "val" if i < n_train + n_val else "test"
    return {k: out[k] for k in order}
