"""`grade bench crowd`: the cost of stepping a crowd of 8, 32 and 128 people.

Each crowd walks in procedural rooms sized to it (2x2 rooms for 8 people, 4x4 for 32, 6x6 for
128) for `--duration-s` simulated seconds at the default physics rate (240 Hz) with the default
avoidance (ORCA at 10 Hz). Columns:
  update ms     one avoidance update (ORCA for everyone, new goals and their A* paths);
  step us       one physics step between updates (closed-form gait, copying the state);
  ms/sim s      crowd time per simulated second, and what fraction of real time that is;
  fcl s         the FCL placement check of the whole trace (every part, every step);
  min gap m     the smallest distance between two people's centres (body radii: 0.35 m).
Times are wall-clock seconds of this process; other load on the machine adds to them.
"""

from __future__ import annotations

import time

import numpy as np

from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_people.config import PeopleConfig
from grade_people.crowd import Crowd
from grade_people.people import PersonSpec
from grade_sim.actors.placement import check_traces
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.procedural import generate_rooms

ROOMS = {8: 2, 32: 4, 128: 6}
PHYSICS_HZ = 240.0
COLORS = {k: (0.5, 0.5, 0.5, 1.0) for k in ("skin", "shirt", "pants", "shoes")}


def _bench(n: int, rooms: int, duration_s: float, fcl: bool) -> dict[str, float]:
    world = generate_rooms(
        ProceduralConfig(rooms_x=rooms, rooms_y=rooms), LightsConfig(), np.random.default_rng(0)
    )
    config = PeopleConfig(count=min(n, 64))  # count's bound is the scenario's; unused here
    dt = 1.0 / PHYSICS_HZ
    n_steps = round(duration_s * PHYSICS_HZ) + 1
    heights = [1.75] * n
    crowd = Crowd(world.free_space, config, heights, n_steps, dt, np.random.default_rng(1))
    update_s = step_s = 0.0
    updates = steps = 0
    for k in range(n_steps):
        t0 = time.perf_counter()
        crowd.advance(k)
        took = time.perf_counter() - t0
        if crowd.updates_at(k):
            update_s += took
            updates += 1
        else:
            step_s += took
            steps += 1
    pos = np.stack([t.position_xy for t in crowd.timelines], axis=1)
    gaps = [
        float(np.linalg.norm(pos[:, i] - pos[:, i + 1 :].transpose(1, 0, 2), axis=2).min())
        for i in range(n - 1)
    ]
    fcl_s = float("nan")
    if fcl:
        people = [PersonSpec(f"person_{i}", i + 1, 1.75, COLORS) for i in range(n)]
        t0 = time.perf_counter()
        check_traces(world, people, crowd.timelines, dt_s=dt)
        fcl_s = time.perf_counter() - t0
    total = update_s + step_s
    return {
        "update_ms": 1000 * update_s / max(updates, 1),
        "step_us": 1e6 * step_s / max(steps, 1),
        "ms_per_sim_s": 1000 * total / duration_s,
        "fcl_s": fcl_s,
        "min_gap_m": min(gaps),
    }


def main(argv: list[str]) -> int:
    parser = bench_parser("crowd", __doc__)
    parser.add_argument("--duration-s", type=float, default=10.0, help="simulated seconds (10)")
    parser.add_argument(
        "--people", type=int, nargs="+", default=sorted(ROOMS), help="crowd sizes (8 32 128)"
    )
    parser.add_argument("--no-fcl", action="store_true", help="skip the FCL placement check")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    print(
        f"{'people':>6} {'rooms':>5} {'update ms':>9} {'step us':>8} {'ms/sim s':>9} "
        f"{'% real':>6} {'fcl s':>7} {'min gap m':>9}"
    )
    rows: list[tuple[Cell, ...]] = []
    for n in args.people:
        rooms = ROOMS.get(n, 6)
        r = _bench(n, rooms, args.duration_s, not args.no_fcl)
        print(
            f"{n:>6} {f'{rooms}x{rooms}':>5} {r['update_ms']:>9.2f} {r['step_us']:>8.1f} "
            f"{r['ms_per_sim_s']:>9.1f} {r['ms_per_sim_s'] / 10:>6.1f} {r['fcl_s']:>7.2f} "
            f"{r['min_gap_m']:>9.3f}"
        )
        rows.append(
            (
                n,
                f"{rooms}x{rooms}",
                round(r["update_ms"], 2),
                round(r["step_us"], 1),
                round(r["ms_per_sim_s"], 1),
                "-" if args.no_fcl else round(r["fcl_s"], 2),
                round(r["min_gap_m"], 3),
            )
        )
    columns = ("people", "rooms", "update ms", "step us", "ms per sim s", "fcl s", "min gap m")
    title = f"Crowd of N people, {args.duration_s:g} s simulated"
    write_results(args.json, "crowd", argv, [ResultTable(title, columns, tuple(rows))])
    return 0
