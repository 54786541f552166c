"""A DBoW2 ORB vocabulary trained from images: the bag-of-words tree ORB-SLAM3 loads as text.

ORB-SLAM3 needs a vocabulary of binary ORB descriptors (its ORBvoc.txt: k = 10 branches, L = 6
levels, trained by its authors on a large photo set; 139 MB, downloaded from the web, which
this machine cannot reach). This module trains one the same way DBoW2 does, from descriptors
OpenCV's ORB extracts from our images: a hierarchical k-medians tree (k-means++ seeding,
majority-bit centroids, Hamming distance), every branch down to level L, TF-IDF weights on the
leaves, written in the text format `ORBVocabulary::loadFromTextFile` reads:

    k L scoring weighting                        (first line: 0 0 = L1 norm, TF-IDF)
    parent is_leaf d0 ... d31 weight             (one line per node after the root, in id order)

Deterministic: the only randomness is the seeded numpy Generator of the seeding step; the same
descriptors and seed give the same file, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.atomic import StagedOutput
from grade_common.schema import Checked, Wording, bounds
from grade_slam.config import PARAMETER_WORDING
from grade_slam.errors import SlamOutputExistsError

DESCRIPTOR_BYTES = 32  # ORB: 256 bits
_MAX_ITERATIONS = 25  # k-medians rounds per node; DBoW2 runs to convergence, which this caps


@dataclass(frozen=True)
class VocabularyShape(Checked):
    """The tree (branching `k`, depth `levels`), the features per image and the training seed."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    k: int = field(default=10, metadata=bounds(2, 20))  # ORB-SLAM's loader accepts k <= 20
    levels: int = field(default=5, metadata=bounds(1, 10))
    features_per_image: int = field(default=1000, metadata=bounds(50, 10000))
    seed: int = field(default=0, metadata=bounds(0))


def orb_descriptors(gray: NDArray[np.uint8], features: int) -> NDArray[np.uint8]:
    """ORB descriptors (n, 32) of one grey image, with ORB-SLAM's pyramid (8 levels, x1.2) and
    its low FAST threshold (minThFAST 7): our rendered rooms are plain, FAST 20 finds ~30 corners
    in a 320 x 240 frame, 7 about 230."""
    orb = cv2.ORB.create(nfeatures=features, scaleFactor=1.2, nlevels=8, fastThreshold=7)
    _, descriptors = orb.detectAndCompute(gray, None)
    if descriptors is None:
        return np.zeros((0, DESCRIPTOR_BYTES), dtype=np.uint8)
    return np.asarray(descriptors, dtype=np.uint8)


def _hamming(bits: NDArray[np.float32], centres: NDArray[np.float32]) -> NDArray[np.float32]:
    """Hamming distances (n, k) between 0/1 bit rows: |a| + |c| - 2 a.c, exact in float32."""
    out: NDArray[np.float32] = (
        bits.sum(axis=1, keepdims=True) + centres.sum(axis=1)[None, :] - 2.0 * bits @ centres.T
    )
    return out


def _kmedians(
    bits: NDArray[np.float32], k: int, rng: np.random.Generator
) -> tuple[NDArray[np.float32], NDArray[np.intp]]:
    """DBoW2's clustering step: k-means++ seeds, then majority-bit centres until stable."""
    n = bits.shape[0]
    chosen = [int(rng.integers(n))]
    nearest = _hamming(bits, bits[chosen])[:, 0]
    for _ in range(1, k):
        weights = nearest.astype(np.float64) ** 2
        total = float(weights.sum())
        if total <= 0.0:  # fewer distinct descriptors than k: the rest would be duplicates
            break
        pick = int(rng.choice(n, p=weights / total))
        chosen.append(pick)
        nearest = np.minimum(nearest, _hamming(bits, bits[[pick]])[:, 0])
    centres = bits[chosen].copy()
    labels = np.argmin(_hamming(bits, centres), axis=1)
    for _ in range(_MAX_ITERATIONS):
        for c in range(len(centres)):
            members = bits[labels == c]
            if len(members):
                centres[c] = (2.0 * members.sum(axis=0) >= len(members)).astype(np.float32)
        new = np.argmin(_hamming(bits, centres), axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
    return centres, labels


@dataclass
class _Tree:
    parents: list[int] = field(default_factory=lambda: [-1])
    descriptors: list[NDArray[np.float32]] = field(
        default_factory=lambda: [np.zeros(8 * DESCRIPTOR_BYTES, dtype=np.float32)]
    )
    leaf_members: dict[int, NDArray[np.intp]] = field(default_factory=dict)

    def add(self, parent: int, bits: NDArray[np.float32]) -> int:
        self.parents.append(parent)
        self.descriptors.append(bits)
        return len(self.parents) - 1


def train_vocabulary(
    descriptors_per_image: Sequence[NDArray[np.uint8]],
    shape: VocabularyShape,
    progress: Callable[[int], None] | None = None,
) -> str:
    """The vocabulary's text (see the module docstring) from each image's ORB descriptors.

    Args:
        descriptors_per_image: (n_i, 32) uint8 descriptors, one array per training image (the
            images count the documents of the TF-IDF weights).
        progress: called with the number of descriptors placed in leaves after each branch.

    Raises:
        ValueError: no descriptors at all, or a descriptor array not (n, 32) uint8.
    """
    for d in descriptors_per_image:
        if d.ndim != 2 or d.shape[1] != DESCRIPTOR_BYTES or d.dtype != np.uint8:
            raise ValueError(f"descriptors must be (n, 32) uint8 arrays, got {d.shape} {d.dtype}")
    packed = np.concatenate([*descriptors_per_image, np.zeros((0, DESCRIPTOR_BYTES), np.uint8)])
    if len(packed) == 0:
        raise ValueError("no ORB descriptors to train a vocabulary from (blank images?)")
    image_of = np.repeat(
        np.arange(len(descriptors_per_image)), [len(d) for d in descriptors_per_image]
    )
    bits = np.unpackbits(packed, axis=1).astype(np.float32)  # MSB first, as the bytes read
    rng = np.random.default_rng(shape.seed)
    tree = _Tree()
    # Depth first, children in cluster order: node ids then follow the order DBoW2 numbers them
    # in, and the recursion needs no more than `levels` frames.
    stack: list[tuple[int, int, NDArray[np.intp]]] = [(0, 0, np.arange(len(bits)))]
    while stack:
        node, level, members = stack.pop()
        if level == shape.levels:
            tree.leaf_members[node] = members
            if progress is not None:
                progress(len(members))
            continue
        if len(members) <= shape.k:  # each descriptor its own branch, as DBoW2 does
            groups = [(bits[m], members[[i]]) for i, m in enumerate(members)]
        else:
            centres, labels = _kmedians(bits[members], shape.k, rng)
            groups = [(centres[c], members[labels == c]) for c in range(len(centres))]
            groups = [(c, m) for c, m in groups if len(m)]
        children = [(tree.add(node, centre), m) for centre, m in groups]
        stack.extend((child, level + 1, m) for child, m in reversed(children))
    return _text(tree, shape, image_of, len(descriptors_per_image))


def _text(tree: _Tree, shape: VocabularyShape, image_of: NDArray[np.intp], images: int) -> str:
    lines = [f"{shape.k} {shape.levels} 0 0"]  # L1 scoring, TF-IDF weighting
    for node in range(1, len(tree.parents)):
        members = tree.leaf_members.get(node)
        weight = 0.0
        if members is not None:
            # IDF: log(images / images in which this word occurs), DBoW2's TF_IDF
            weight = float(np.log(images / len(np.unique(image_of[members]))))
        packed = np.packbits(tree.descriptors[node].astype(np.uint8))
        lines.append(
            f"{tree.parents[node]} {int(members is not None)} "
            + " ".join(str(int(b)) for b in packed)
            + f" {weight:.6f}"
        )
    # No newline after the last node: ORB-SLAM3's reader would read one more, empty node.
    return "\n".join(lines)


def write_vocabulary(path: str | Path, text: str) -> Path:
    """Write a new vocabulary file (staged, moved into place when complete)."""
    with StagedOutput(path, exists_error=SlamOutputExistsError) as staged:
        staged.write_text(text)
    return Path(path)


def check_vocabulary_file(path: str | Path) -> tuple[int, int]:
    """(k, L) of a DBoW2 text vocabulary, after checking its first line and first node (a full
    read of a 139 MB ORBvoc.txt would take longer than ORB-SLAM3's own load).

    Raises:
        ValueError: naming the file and the line that is not a vocabulary's.
    """
    with open(path, encoding="ascii") as f:
        head = f.readline().split()
        node = f.readline().split()
    if len(head) != 4 or not all(h.isdigit() for h in head):
        raise ValueError(f"{path}: line 1 is {' '.join(head)!r}, not 'k L scoring weighting'")
    if len(node) != DESCRIPTOR_BYTES + 3:
        raise ValueError(
            f"{path}: line 2 has {len(node)} fields, a node has {DESCRIPTOR_BYTES + 3} "
            "(parent, is_leaf, 32 descriptor bytes, weight)"
        )
    return int(head[0]), int(head[1])
