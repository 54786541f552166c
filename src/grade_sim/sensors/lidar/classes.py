"""Class ids of the lidar labels: the scene's instance classes, numbered in sorted order from 1.

0 is "unlabeled" (SemanticKITTI's convention); the ids are written next to the scans
(gt/<robot>/<lidar>/classes.yaml) because they depend on the classes the scene has.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

UNLABELED = "unlabeled"


def class_ids(labels_of_instance: Mapping[int, str]) -> dict[str, int]:
    names = sorted(set(labels_of_instance.values()) - {UNLABELED})
    return {UNLABELED: 0} | {name: i + 1 for i, name in enumerate(names)}


def class_lookup(labels_of_instance: Mapping[int, str]) -> NDArray[np.uint16]:
    """Array indexed by instance id (uint16) giving the class id."""
    ids = class_ids(labels_of_instance)
    out = np.zeros(2**16, dtype=np.uint16)
    for instance, label in labels_of_instance.items():
        out[instance] = ids[label]
    return out
