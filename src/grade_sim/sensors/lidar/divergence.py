"""Beam divergence: each beam is a cone cast as a bundle of sub-rays, whose echoes combine.

A real beam is not a line: its footprint grows with range (full cone angle `divergence`, a few
mrad). Each beam is cast as `subrays` rays: its centre and a ring of the others at
divergence / (2 sqrt 2) off the axis (the ring halving the footprint's area), all fired
together. Every sub-ray that hits returns energy reflectivity x cos(incidence) (misses return
none). Echoes whose ranges lie within `echo_merge_m` of each other overlap in the receiver and
merge into one return at their energy-weighted mean range: at an edge between two surfaces
closer than that, the point lies between them (a mixed pixel). Echoes farther apart stay
separate and `mode` picks one (strongest: most energy; first: nearest; last: farthest): at an
edge in front of a far background the point lands on one surface, never between. The return's
intensity is its echo's energy over the whole bundle, so a beam half off an edge comes back at
about half the intensity (and the physics ray drop drops it more often); its instance and class
are those of the sub-ray of the echo with the most energy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import ReturnMode
from grade_sim.engine.raycast import Hits
from grade_sim.sensors.lidar.beams import BeamFiring


@dataclass(frozen=True)
class Footprint:
    """A beam's cone: full angle (rad), sub-rays per beam, echo merge distance, return mode."""

    divergence_rad: float
    subrays: int
    echo_merge_m: float
    mode: ReturnMode

    def offsets_rad(self) -> FloatArray:
        """(subrays, 2) angular offsets (horizontal, vertical) of the sub-rays from the axis."""
        ring = self.subrays - 1
        angle = 2 * np.pi * np.arange(ring) / ring
        radius = self.divergence_rad / (2 * np.sqrt(2.0))
        out: FloatArray = np.vstack(
            [np.zeros((1, 2)), radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)]
        )
        return out


@dataclass(frozen=True)
class Bundles:
    """The sub-rays of a scan's beams: `fire` (sorted by firing time, then elevation, so a
    rotating lidar's columns keep one sorted elevation table) and, per sub-ray, its beam."""

    fire: BeamFiring
    beam_of: NDArray[np.int64]
    order: NDArray[np.int64]  # sub-ray k of `fire` is sub-ray order[k] in beam-major order


def expand(fire: BeamFiring, footprint: Footprint) -> Bundles:
    """Every beam of `fire` as a bundle of sub-rays (same firing time, ring and column)."""
    d = fire.directions
    n, m = len(d), footprint.subrays
    az = np.arctan2(d[:, 1], d[:, 0])
    el = np.arcsin(np.clip(d[:, 2], -1.0, 1.0))
    # Sub-rays of the beam turned to azimuth 0 (axis (cos el, 0, sin el), across it the
    # horizontal y and the vertical (-sin el, 0, cos el)), then turned about z to the beam's
    # azimuth: z does not change, so every column of a rotating lidar keeps exactly the same
    # sub-ray elevations.
    off = footprint.offsets_rad()
    t_az, t_el = np.tan(off[:, 0])[None], np.tan(off[:, 1])[None]
    ce, se = np.cos(el)[:, None], np.sin(el)[:, None]
    x, y, z = ce - t_el * se, np.broadcast_to(t_az, (n, m)), se + t_el * ce
    norm = np.sqrt(x * x + y * y + z * z)
    x, y, z = x / norm, y / norm, z / norm
    ca, sa = np.cos(az)[:, None], np.sin(az)[:, None]
    sub = np.stack([x * ca - y * sa, x * sa + y * ca, z], axis=2).reshape(n * m, 3)
    beam = np.repeat(np.arange(n, dtype=np.int64), m)
    order = np.lexsort((sub[:, 2], fire.offset_ns[beam]))
    return Bundles(
        BeamFiring(
            sub[order],
            fire.ring[beam[order]],
            fire.column[beam[order]],
            fire.offset_ns[beam[order]],
        ),
        beam[order],
        order,
    )


def combine(sub: Hits, bundles: Bundles, footprint: Footprint) -> Hits:
    """One return per beam from its sub-rays' hits (see the module doc)."""
    m = footprint.subrays
    n = len(bundles.order) // m

    def beam_major(values: NDArray[np.generic]) -> NDArray[np.generic]:
        out = np.empty_like(values)
        out[bundles.order] = values
        return out.reshape(n, m)

    rng = beam_major(sub.range_m).astype(np.float64)
    inst = beam_major(sub.instance_id)
    cos = beam_major(sub.cos_incidence).astype(np.float64)
    refl = beam_major(sub.reflectivity).astype(np.float64)
    hit = np.isfinite(rng)
    energy = np.where(hit, refl * cos, 0.0)
    # Sub-rays by range; a gap above echo_merge_m starts a new echo (misses sort last).
    by_range = np.argsort(rng, axis=1, kind="stable")
    r = np.take_along_axis(rng, by_range, axis=1)
    e = np.take_along_axis(energy, by_range, axis=1)
    h = np.take_along_axis(hit, by_range, axis=1)
    c = np.take_along_axis(cos, by_range, axis=1)
    with np.errstate(invalid="ignore"):
        gap = np.diff(r, axis=1) > footprint.echo_merge_m
    echo = np.concatenate([np.zeros((n, 1), dtype=np.int64), np.cumsum(gap, axis=1)], axis=1)
    member = (echo[:, :, None] == np.arange(m)) & h[:, :, None]  # (n, sub-ray, echo)
    count = member.sum(axis=1)
    e_echo = np.einsum("nj,njs->ns", e, member)
    # Energy-weighted range; a tiny floor keeps echoes of zero energy (grazing) at their mean.
    w = e + 1e-12
    r_hit = np.where(h, r, 0.0)
    r_echo = np.einsum("nj,njs->ns", w * r_hit, member) / np.maximum(
        np.einsum("nj,njs->ns", w, member), 1e-300
    )
    c_echo = np.einsum("nj,njs->ns", c, member) / np.maximum(count, 1)
    present = count > 0
    if footprint.mode is ReturnMode.STRONGEST:
        pick = np.argmax(np.where(present, e_echo + 1e-12, -1.0), axis=1)
    elif footprint.mode is ReturnMode.FIRST:
        pick = np.zeros(n, dtype=np.int64)
    else:
        pick = np.maximum(present.sum(axis=1) - 1, 0)
    row = np.arange(n)
    out = Hits.none(n)
    seen = present[row, pick]
    out.range_m = np.where(seen, r_echo[row, pick], np.inf)
    cos_out = np.where(seen, c_echo[row, pick], 0.0)
    intensity = e_echo[row, pick] / m
    out.cos_incidence = cos_out
    out.reflectivity = np.where(
        cos_out > 0, np.clip(intensity / np.maximum(cos_out, 1e-300), 0.0, 1.0), 0.0
    )
    # The instance of the echo's sub-ray with the most energy.
    in_pick = echo == pick[:, None]
    strongest = np.argmax(np.where(in_pick & h, e + 1e-12, -1.0), axis=1)
    inst_sorted = np.take_along_axis(inst, by_range, axis=1)
    out.instance_id = np.where(seen, inst_sorted[row, strongest], 0).astype(np.uint16)
    return out
