"""`grade bench lidar`: the lidar's cost per scan against a bare Embree cast, and the real-time
factor of the simulator with and without the lidar.

Scenario: config/indoor_uav.yaml (8 people, 3 flying objects) with an HDL-64E (64 x 2048 at
10 Hz) on the first robot. Both simulator runs publish nothing and record nothing, so the
difference is the lidar. After the lidar run, the last scan is cast again `--repeats` times:
  ours  the full scan: rolling shutter, moving parts in motion blur, returns, noise, ray drop,
        points; the people's poses at the motion steps already computed (by the scan before);
  ours+poses  the same, computing those poses too (the animation's cost, as in a run);
  cast  our ray casting alone (rolling shutter and moving parts, no returns);
  bare  one embreex call (output=1) casting the same rays, converted to float32, on one scene
        holding the same triangles (static world and every moving part posed at mid-sweep); it
        returns what a scan needs from Embree: distance, geometry id, primitive id and the
        geometric normal (for the incidence). What Embree costs by itself; the target.
  bare+decode  the same plus our decoding of those hits (instance, |cos incidence|,
        reflectivity per triangle): what a one-scene scan of a static world would cost.
Times are CPU seconds of this process (one core: embreex casts on the calling thread). The
variants take turns (one scan each per round), so a load from other processes falls on all of
them alike; the ratios are of the medians over the rounds, with the ratio of the minima beside.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from grade_common.bench_results import ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.config.lidar import LidarConfig
from grade_sim.config.scenario import Scenario, load_scenario
from grade_sim.engine.raycast import EmbreeDevice, InstanceMesh, InstanceScene
from grade_sim.scenarios import add_scenario_argument, default_scenario_path
from grade_sim.scene import build_scene
from grade_sim.sensors.observer import Discard
from grade_sim.sensors.streams.lidar import LidarStream
from grade_sim.sim.orchestrator import Simulator


def _run(scenario: Scenario) -> tuple[Simulator, float]:
    sim = Simulator(build_scene(scenario), observers=(Discard(),))
    try:
        stats = sim.run()
    finally:
        sim.finish()
    return sim, stats.real_time_factor


def _cpu_ms(variants: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """CPU ms of each call, the variants taking turns round by round."""
    for fn in variants.values():
        fn()  # untimed: embreex commits (builds) a scene on its first cast
    out: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            t0 = time.process_time()
            fn()
            out[name].append(1000 * (time.process_time() - t0))
    return out


def main(argv: list[str]) -> int:
    parser = bench_parser("lidar", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--duration-s", type=float, default=2.0, help="simulated seconds (2)")
    parser.add_argument("--preset", default="hdl64e", help="lidar preset (hdl64e)")
    parser.add_argument("--repeats", type=int, default=5, help="scans timed per variant (5)")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    base = load_scenario(
        args.scenario or default_scenario_path(),
        {"duration_s": args.duration_s, "realtime": False, "bootstrap_s": 0.0},
    )
    robot = base.robots[0]
    lidar = LidarConfig(name="lidar", preset=args.preset)
    with_lidar = replace(base, robots=(replace(robot, lidars=(lidar,)), *base.robots[1:]))
    with_lidar.validate("scenario")
    _, rtf_without = _run(base)
    sim, rtf_with = _run(with_lidar)
    stream = next(s for s in sim.streams.streams if isinstance(s, LidarStream))
    sensor, stamp = stream.sensor, stream.last_stamp_ns
    if sensor is None or stamp is None:
        print("no scan was taken: make --duration-s at least one sweep")
        return 1
    caster = sensor.caster
    _, offset, origins, dirs = caster.rays(stamp, stream.sensor_pose_at)
    mid_ns = np.array([stamp + int(offset.max()) // 2], dtype=np.int64)
    pos_s, rot_s = stream.part_poses_at(mid_ns)
    pos, rot = pos_s[0], rot_s[0]
    moving = [
        InstanceMesh(p.instance_id, p.triangles @ rot[i].T + pos[i], p.reflectivity)
        for i, p in enumerate(caster.parts)
    ]
    statics = caster.static_meshes
    bare_scene = InstanceScene([*statics, *moving], EmbreeDevice())
    range_max = caster.table.range_max_m

    def scan_with_poses() -> object:
        stream.forget_actor_poses()
        return sensor.scan(stamp, stream.sensor_pose_at, stream.part_poses_at)

    times = _cpu_ms(
        {
            "ours": lambda: sensor.scan(stamp, stream.sensor_pose_at, stream.part_poses_at),
            "poses": scan_with_poses,
            "cast": lambda: caster.cast(stamp, stream.sensor_pose_at, stream.part_poses_at),
            "bare": lambda: bare_scene.embree_hits(origins, dirs, range_max),
            "decode": lambda: bare_scene.cast(origins, dirs, range_max),
        },
        args.repeats,
    )
    med = {k: float(np.median(v)) for k, v in times.items()}
    low = {k: float(np.min(v)) for k, v in times.items()}
    ours_ms, cast_ms, bare_ms, decode_ms = med["ours"], med["cast"], med["bare"], med["decode"]
    n_rays = len(origins)
    print(
        f"scenario: {args.scenario or default_scenario_path()}, "
        f"{len(sim.scene.group(People))} people, {len(sim.scene.group(FlyingObjects))} flying "
        f"objects; lidar {args.preset}: {n_rays} rays per scan "
        f"at {caster.table.rate_hz:g} Hz, {caster.slices} motion segments, "
        f"{len(caster.parts)} moving parts"
    )
    print(
        f"ms per scan per core (median of {args.repeats} rounds): ours (full scan) "
        f"{ours_ms:.1f}, our cast {cast_ms:.1f}, bare Embree {bare_ms:.1f}, bare Embree + hit "
        f"decoding {decode_ms:.1f}; minima {low['ours']:.1f}, {low['cast']:.1f}, "
        f"{low['bare']:.1f}, {low['decode']:.1f}"
    )
    print(
        f"with the people's poses at the {caster.slices + 1} motion steps computed too: "
        f"{med['poses']:.1f} ms per scan ({100 * bare_ms / med['poses']:.0f} % of bare)"
    )
    print(
        f"rate vs bare Embree (target >= 90 %): full scan {100 * bare_ms / ours_ms:.0f} %, "
        f"cast only {100 * bare_ms / cast_ms:.0f} %; bare Embree "
        f"{n_rays / bare_ms / 1000:.2f} M rays/s; against bare + decoding: full scan "
        f"{100 * decode_ms / ours_ms:.0f} %, cast only {100 * decode_ms / cast_ms:.0f} %; "
        f"full scan from the minima {100 * low['bare'] / low['ours']:.0f} %"
    )
    print(
        f"real-time factor ({args.duration_s:g} s simulated, no recording, no ROS): "
        f"without lidar {rtf_without:.3f}, with lidar {rtf_with:.3f}"
    )
    labels = {
        "ours": "full scan",
        "poses": "full scan, people's poses computed too",
        "cast": "cast only",
        "bare": "bare Embree",
        "decode": "bare Embree + hit decoding",
    }
    rows = tuple((labels[k], round(med[k], 1), round(low[k], 1)) for k in labels)
    title = (
        f"{args.preset}, {n_rays} rays per scan, ms per scan on one core ({args.repeats} rounds)"
    )
    notes = (
        f"Real-time factor ({args.duration_s:g} s simulated, no recording, no ROS): without "
        f"lidar {rtf_without:.3f}, with lidar {rtf_with:.3f}."
    )
    table = ResultTable(title, ("variant", "median ms", "min ms"), rows)
    write_results(args.json, "lidar", argv, [table], notes)
    return 0
