"""`grade bench sim --ground-truth`: what each opt-in ground-truth stream costs per frame.

The default scenario's scene (640x480 camera, 8 people, 3 flying objects) is rendered `frames`
times with the default streams (rgb, depth, instance) and with each of semantic, normals and flow
added (and all three), the variants interleaved frame by frame so that machine load hits them
alike. Per variant: the render (the engine's passes and the numpy ground truth) and the
encoding of the extra images (the ROS message and the run directory's 16-bit PNG), in
milliseconds of wall time per frame. The actors walk and the robot turns a little between
frames, so the flow has motion to follow.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.gt_png import flow_to_png_u16, normals_to_png_u16
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Stream, load_scenario
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.protocol import CameraFrame
from grade_sim.scene import build_scene
from grade_sim.sensors import messages as msgs

BASE = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})
VARIANTS: dict[str, frozenset[Stream]] = {
    "rgb+depth+instance (default)": BASE,
    "+ semantic": BASE | {Stream.SEMANTIC},
    "+ normals": BASE | {Stream.NORMALS},
    "+ flow": BASE | {Stream.FLOW},
    "+ all three": BASE | {Stream.SEMANTIC, Stream.NORMALS, Stream.FLOW},
}
_ENCODE: dict[Stream, tuple[str, Callable[[CameraFrame], NDArray[np.generic] | None]]] = {
    Stream.SEMANTIC: ("mono16", lambda f: f.semantic),
    Stream.NORMALS: ("32FC3", lambda f: f.normals_cam),
    Stream.FLOW: ("32FC2", lambda f: f.flow_px),
}
_PNG: dict[Stream, Callable[[NDArray[np.generic]], NDArray[Any]]] = {
    Stream.SEMANTIC: lambda a: a,
    Stream.NORMALS: lambda a: normals_to_png_u16(a.astype(np.float32)),
    Stream.FLOW: lambda a: flow_to_png_u16(a.astype(np.float32)),
}


def _encode_s(frame: CameraFrame, streams: frozenset[Stream]) -> float:
    t0 = time.perf_counter()
    for kind, (encoding, array_of) in _ENCODE.items():
        array = array_of(frame)
        if kind in streams and array is not None:
            msgs.image(0, "camera", array, encoding)
            cv2.imencode(".png", _PNG[kind](array), [cv2.IMWRITE_PNG_COMPRESSION, 1])
    return time.perf_counter() - t0


def run(scenario_path: Path, frames: int) -> int:
    scenario = load_scenario(scenario_path)
    scene = build_scene(scenario)
    robot = scene.robots[0].model
    camera = robot.config.cameras[0]
    engine = MujocoEngine(scene)
    render_s = dict.fromkeys(VARIANTS, 0.0)
    encode_s = dict.fromkeys(VARIANTS, 0.0)
    names = list(VARIANTS)
    step_per_frame = round(scenario.rates.physics_hz / camera.rate_hz)
    try:
        for k in range(frames + 1):
            pos, quat = scene.actor_body_poses(k * step_per_frame)
            engine.set_actor_poses(pos, quat)
            q = engine.robot_state(robot.name).joint_positions.copy()
            q[3] += 0.02  # turn the camera a little (yaw) so the flow has motion
            zero = np.zeros_like(q)
            engine.set_robot_kinematics(robot.name, q, zero, zero)
            engine.update_kinematic_sensors()
            order = names[k % len(names) :] + names[: k % len(names)]
            for name in order:
                t0 = time.perf_counter()
                frame = engine.render(robot.name, camera.name, VARIANTS[name])
                if k > 0:  # frame 0 warms up the GL context and has no previous flow frame
                    render_s[name] += time.perf_counter() - t0
                    encode_s[name] += _encode_s(frame, VARIANTS[name])
    finally:
        engine.close()
    base = names[0]
    budget_ms = 1000.0 / camera.rate_hz
    print(
        f"scene: {scenario_path} ({camera.width}x{camera.height} camera at {camera.rate_hz:g} Hz, "
        f"{len(scene.group(People))} people, {len(scene.group(FlyingObjects))} flying objects), "
        f"{frames} frames, "
        "variants interleaved"
    )
    print(f"{'streams':<30}{'render ms':>10}{'encode ms':>10}{'added ms':>10}{'of 1/rate':>10}")
    base_ms = 1000 * (render_s[base] + encode_s[base]) / frames
    for name in names:
        r, e = 1000 * render_s[name] / frames, 1000 * encode_s[name] / frames
        added = r + e - base_ms
        share = f"{100 * added / budget_ms:.0f} %" if name != base else ""
        print(f"{name:<30}{r:>10.1f}{e:>10.1f}{added:>10.1f}{share:>10}")
    print(
        f"'added' is the cost over the default streams per frame; 'of 1/rate' puts it against the "
        f"{budget_ms:.1f} ms a frame may take at real time."
    )
    return 0
