"""REP 105 for a SLAM estimate: the `map -> odom` correction from the estimated camera pose.

The simulator owns `odom -> base_link` (its odometry) and the static mounts down to the optical
frame; the SLAM node owns `map -> odom`, chosen so that map -> odom -> ... -> optical equals the
estimate: T_map_odom = T_map_optical(estimate) @ inv(T_odom_optical). `FrameChain` composes the
static mounts from /tf_static (arrays here, messages in the node).
"""

from __future__ import annotations

import numpy as np

from grade_common.types import FloatArray
from grade_slam.errors import SlamInputError


class FrameChain:
    """Transforms parent -> child (4x4, child in parent), composed along the tree."""

    def __init__(self) -> None:
        self._parent: dict[str, tuple[str, FloatArray]] = {}

    def add(self, parent: str, child: str, transform_parent_child: FloatArray) -> None:
        self._parent[child] = (parent, np.asarray(transform_parent_child, dtype=np.float64))

    def transform(self, ancestor: str, frame: str) -> FloatArray:
        """`frame` in `ancestor`'s coordinates.

        Raises:
            SlamInputError: `ancestor` is not above `frame` in the transforms received so far.
        """
        result = np.eye(4)
        current = frame
        while current != ancestor:
            link = self._parent.get(current)
            if link is None:
                raise SlamInputError(f"no transform chain from {ancestor!r} down to {frame!r}")
            current, transform = link
            result = transform @ result
        return result

    def _ancestors(self, frame: str) -> list[str]:
        chain = [frame]
        while chain[-1] in self._parent:
            chain.append(self._parent[chain[-1]][0])
        return chain

    def relative(self, reference: str, frame: str) -> FloatArray:
        """`frame` in `reference`'s coordinates, through their nearest common ancestor (the
        camera's optical frame in the IMU frame: siblings under base_link).

        Raises:
            SlamInputError: the two frames share no ancestor in the transforms received so far.
        """
        above_reference = self._ancestors(reference)
        common = next((f for f in self._ancestors(frame) if f in above_reference), None)
        if common is None:
            raise SlamInputError(f"no transform chain joins {reference!r} and {frame!r}")
        return np.asarray(
            np.linalg.inv(self.transform(common, reference)) @ self.transform(common, frame),
            dtype=np.float64,
        )


def map_to_odom(pose_map_optical: FloatArray, pose_odom_optical: FloatArray) -> FloatArray:
    """The map -> odom transform that makes the TF tree give the SLAM estimate."""
    return np.asarray(pose_map_optical @ np.linalg.inv(pose_odom_optical), dtype=np.float64)
