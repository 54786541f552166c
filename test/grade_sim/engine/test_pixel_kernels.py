"""The compiled per-pixel kernels give exactly what the numpy expressions they replaced gave."""

from __future__ import annotations

import numpy as np

from grade_sim.engine.mujoco import pixel_kernels


def _numpy_geom_ids(seg: np.ndarray, lut: np.ndarray) -> np.ndarray:
    segid = (
        seg[::-1, :, 0].astype(np.int32)
        | (seg[::-1, :, 1].astype(np.int32) << 8)
        | (seg[::-1, :, 2].astype(np.int32) << 16)
    )
    return lut[np.clip(segid, 0, len(lut) - 1)]


def _numpy_instances(geoms: np.ndarray, geom_inst: np.ndarray, skin_inst: np.ndarray) -> np.ndarray:
    instance = geom_inst[np.maximum(geoms, 0)]
    instance[geoms < 0] = 0
    skin = geoms <= -2
    if skin.any():
        instance[skin] = skin_inst[-2 - geoms[skin]]
    return instance


def _numpy_depth(
    buf: np.ndarray, near: float, far: float, near_m: float, far_m: float
) -> np.ndarray:
    c_coef = -(far + near) / (far - near)
    d_coef = -(2.0 * far * near) / (far - near)
    c_coef = -0.5 * c_coef - 0.5
    d_coef = -0.5 * d_coef
    z = d_coef / (buf[::-1].astype(np.float64) + c_coef)
    z[(z >= far * 0.999) | (z > far_m) | (z < near_m)] = 0.0
    return z.astype(np.float32)


def test_geom_ids_decode_flip_and_clip_like_numpy() -> None:
    rng = np.random.default_rng(3)
    ngeom = 40
    lut = rng.integers(-30, 500, ngeom + 2).astype(np.int32)
    seg = rng.integers(0, ngeom + 2, (37, 53, 3)).astype(np.uint8)
    seg[0, :5] = 255  # ids past the table clip to its last entry
    seg[3, 7] = (1, 1, 0)  # a green byte: 257, also past it
    out = pixel_kernels.geom_ids(seg, lut)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, _numpy_geom_ids(seg, lut))


def test_instances_of_geoms_skins_and_nothing_like_numpy() -> None:
    rng = np.random.default_rng(4)
    geom_inst = rng.integers(0, 900, 60).astype(np.uint16)
    skin_inst = rng.integers(1, 900, 6).astype(np.uint16)
    geoms = rng.integers(-7, 60, (29, 31)).astype(np.int32)
    out = pixel_kernels.instances(geoms, geom_inst, skin_inst)
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, _numpy_instances(geoms, geom_inst, skin_inst))
    no_skins = np.maximum(geoms, -1)
    np.testing.assert_array_equal(
        pixel_kernels.instances(no_skins, geom_inst, np.zeros(0, np.uint16)),
        _numpy_instances(no_skins, geom_inst, np.zeros(0, np.uint16)),
    )


def test_linear_depth_is_bit_identical_to_numpy_including_the_cuts() -> None:
    rng = np.random.default_rng(5)
    near, far = 0.05000004562190734, 30.000025209498407
    buf = rng.random((41, 47)).astype(np.float32)
    buf[0, :4] = (0.0, 1.0, np.nextafter(np.float32(1.0), np.float32(0.0)), np.nan)
    for near_m, far_m in ((0.05, 20.0), (0.3, 4.0)):
        out = pixel_kernels.linear_depth(
            buf, near=near, far=far, near_m=near_m, far_m=far_m, flip=True
        )
        ref = _numpy_depth(buf, near, far, near_m, far_m)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))
        assert (out == 0).any()
        assert (out > 0).any()
