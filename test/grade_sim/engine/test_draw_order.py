"""The colour pass draws objects nearest first: the scene's entries are reordered only while it
draws, depth and masks stay byte-identical, and RGB changes at most where two objects' coplanar
faces tie."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import mujoco
import numpy as np
import pytest

from grade_sim.config.scenario import Stream
from grade_sim.engine.mujoco import draw_order
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.mujoco.scene_geoms import SceneGeoms, check_layout
from grade_sim.scene import Scene, build_scene

_MODEL = """<mujoco><worldbody>
<geom type="sphere" pos="9 0 0" size="0.5" rgba="1 0 0 1"/>
<geom type="box" pos="3 0 0" size="0.2 0.3 0.4" rgba="0 1 0 1"/>
<geom type="capsule" pos="6 1 0" size="0.1 0.5" rgba="0 0 1 1"/>
<geom type="sphere" pos="1 -1 0" size="0.3"/>
</worldbody></mujoco>"""


def _scene() -> tuple[Any, SceneGeoms]:
    model = mujoco.MjModel.from_xml_string(_MODEL)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    vscene = mujoco.MjvScene(model, maxgeom=10)
    opt, cam = mujoco.MjvOption(), mujoco.MjvCamera()
    mujoco.mjv_updateScene(model, data, opt, None, cam, mujoco.mjtCatBit.mjCAT_ALL, vscene)
    return vscene, SceneGeoms(mujoco, vscene)


def test_records_read_what_the_bindings_read() -> None:
    check_layout(mujoco)
    vscene, geoms = _scene()
    assert len(geoms.records) == vscene.ngeom == 4
    for i, rec in enumerate(geoms.records):
        g = vscene.geoms[i]
        assert (rec["type"], rec["objtype"], rec["objid"], rec["segid"]) == (
            g.type,
            g.objtype,
            g.objid,
            g.segid,
        )
        np.testing.assert_array_equal(rec["pos"], g.pos)
        np.testing.assert_array_equal(rec["size"], g.size)
        np.testing.assert_array_equal(rec["mat"], g.mat.reshape(-1))


def test_objects_are_drawn_whole_nearest_first_and_put_back_after_the_block() -> None:
    vscene, geoms = _scene()
    before = geoms.entries.copy()
    eye = np.zeros(3)
    # Centre distances from the eye: 9, 3, 6.08, 1.41. Entries 0 and 1 are parts of one object
    # (7), drawn together in the scene's order where its nearest part (3 m) puts them.
    objects = np.array([7, 7, -1, -1])
    with draw_order.drawn_nearest_first(geoms, eye, objects):
        ids = [vscene.geoms[i].objid for i in range(vscene.ngeom)]
        rgba = [tuple(vscene.geoms[i].rgba) for i in range(vscene.ngeom)]
    assert ids == [3, 0, 1, 2]
    assert rgba[2] == (0.0, 1.0, 0.0, 1.0)  # whole entries move, not only the named fields
    np.testing.assert_array_equal(geoms.entries, before)
    alone = draw_order.nearest_first(geoms, eye, np.full(4, -1))
    np.testing.assert_array_equal(alone, [3, 1, 2, 0])  # every entry an object of its own
    with pytest.raises(RuntimeError), draw_order.drawn_nearest_first(geoms, eye, objects):
        raise RuntimeError("a failed render")
    np.testing.assert_array_equal(geoms.entries, before)


@pytest.mark.slow
def test_nearest_first_keeps_depth_and_masks_and_changes_rgb_only_at_ties(
    small_scenario: Callable[..., Any],
    engine_of: Callable[[Scene], MujocoEngine],
    turning_views: Callable[..., Iterator[int]],
) -> None:
    scene = build_scene(small_scenario(people={"count": 4, "body": "skinned"}))
    own, nearest = engine_of(scene), engine_of(scene)
    own.near_first = False
    streams = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE, Stream.SEMANTIC})
    setup = scene.robots[0]
    robot, camera = setup.model.name, setup.model.config.cameras[0].name
    changed = pixels = reordered = 0
    for _ in turning_views(scene, own, nearest):
        a = own.render(robot, camera, streams)
        b = nearest.render(robot, camera, streams)
        for name in ("depth_m", "instance", "semantic"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert a.rgb is not None
        assert b.rgb is not None
        changed += int((a.rgb != b.rgb).any(axis=2).sum())
        pixels += a.rgb.shape[0] * a.rgb.shape[1]
        assert nearest._geoms is not None
        eye = np.asarray(nearest._vscene.camera[0].pos, dtype=np.float64)
        order = draw_order.nearest_first(nearest._geoms, eye, nearest._entry_objects())
        reordered += not np.array_equal(order, np.arange(len(order)))
    assert reordered  # the colour pass did draw in another order
    # Objects are drawn whole, so faces of one object that tie keep their order; only faces of
    # two objects touching at exactly the same depth could change.
    assert changed <= 0.001 * pixels
