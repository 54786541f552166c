"""`grade bench delivery`: how many published messages separate subscriber processes receive.

Runs the default scenario with `sim_node` at real-time pace (publish only), optionally
`noise_node` on its output, and one `topic_counter` process per subscriber QoS profile
(sensor-data: best effort, keep last 5; default: reliable, keep last 10), all over grade's local
transport (grade_common.transport). Each topic's received count is compared with the count its
publisher reports at the end (the simulator's and noise_node's `published counts:` lines).
While the simulation runs, the sockets of every process are read from the kernel's tables:
all of them must be bound to loopback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from grade_cli.hogs import cpu_hogs
from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.transport import (
    PROFILE_RELPATH,
    BoundSocket,
    bound_sockets,
    local_transport_environment,
)
from grade_noise.node.noise_node import PUBLISHED_COUNTS_PREFIX as NOISE_COUNTS_PREFIX
from grade_replay.node.topic_counter import (
    PUBLISH_TIMING_PREFIX,
    QOS_PROFILES,
    READY_LINE,
    RECEIVED_COUNTS_PREFIX,
)
from grade_sim.node.sim_node import PUBLISHED_COUNTS_PREFIX as SIM_COUNTS_PREFIX
from grade_sim.scenarios import default_scenario_path

TARGET_FRACTION = 0.999
_SIM_STARTED = "lockstep="  # the sim node's start-up line (scenario loaded, publishers next)


@dataclass
class DeliveryResult:
    """Counts per topic: published by the simulator and noise_node, received per QoS profile."""

    published: dict[str, int]
    noise_published: dict[str, int]
    received: dict[str, dict[str, int]]  # QoS profile name -> topic -> count
    sockets: dict[str, list[BoundSocket]] = field(default_factory=dict)  # process -> sockets
    sim_log: str = ""
    noise_inputs: dict[str, str] = field(default_factory=dict)  # noisy topic -> its input
    # QoS profile name -> topic -> grade_replay.publish_timing figures of what it received
    timing: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def all_published(self) -> dict[str, int]:
        return {**self.published, **self.noise_published}

    def non_loopback(self) -> dict[str, list[BoundSocket]]:
        """The processes that had a socket bound to a non-loopback address, and those sockets."""
        bad = {p: [s for s in socks if not s.is_loopback] for p, socks in self.sockets.items()}
        return {p: socks for p, socks in bad.items() if socks}


class _Process:
    """A child process whose merged output goes to a file (no pipe to fill up)."""

    def __init__(self, label: str, cmd: list[str], env: dict[str, str], workdir: Path) -> None:
        self.label = label
        self.log_path = workdir / f"{label}.log"
        self._log: IO[str] = self.log_path.open("w")
        self.popen = subprocess.Popen(
            cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT, text=True
        )

    def text(self) -> str:
        return self.log_path.read_text()

    def stop(self, timeout_s: float = 20.0) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        try:
            code = self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            code = self.popen.wait()
        self._log.close()
        return code


def _counts(text: str, prefix: str, label: str) -> Any:
    """The JSON after the last line with `prefix` in a process's output."""
    for line in reversed(text.splitlines()):
        at = line.find(prefix)
        if at >= 0:
            return json.loads(line[at + len(prefix) :])
    raise RuntimeError(f"{label} printed no '{prefix.strip()}' line:\n{text[-3000:]}")


def _wait_for(proc: _Process, needle: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while needle not in proc.text():
        if proc.popen.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{proc.label}: no '{needle}' line:\n{proc.text()[-3000:]}")
        time.sleep(0.1)


def _module(name: str) -> list[str]:
    return [sys.executable, "-m", name]


def run_delivery(
    *,
    scenario: Path,
    duration_s: float,
    noise_params: Path | None,
    workdir: Path,
    start_delay_s: float = 5.0,
    include: str = "",
    timeout_s: float = 600.0,
    counter_depths: tuple[int | None, ...] = (None,),
    paced: bool = True,
    record: bool = False,
) -> DeliveryResult:
    """Run the simulator (real-time pace) with counters and, given `noise_params`, noise_node.

    `counter_depths`: one counter per QoS profile and depth (None: topic_counter's default
    depth); with several, the counters are named `<profile> depth <n>`;
    `paced` is sim_node's `pace_publishing` (false: messages leave as soon as simulated);
    `record` has the simulator write a run directory (bag, ground truth) in `workdir` too.

    Raises:
        RuntimeError: a process failed or did not print its counts.
    """
    env = {**os.environ, **local_transport_environment(_config_root() / PROFILE_RELPATH)}
    env.setdefault("ROS_DOMAIN_ID", str(201 + os.getpid() % 30))
    env["ROS_LOG_DIR"] = str(workdir / "ros_log")
    procs: list[_Process] = []
    try:
        counters = {
            _counter_name(qos, depth, len(counter_depths) > 1): _Process(
                f"counter_{qos}" + ("" if len(counter_depths) == 1 else f"_{depth}"),
                [
                    *_module("grade_replay.node.topic_counter"),
                    *("--qos", qos, "--include", include),
                    *(() if depth is None else ("--depth", str(depth))),
                ],
                env,
                workdir,
            )
            for qos in QOS_PROFILES
            for depth in counter_depths
        }
        procs.extend(counters.values())
        noise = None
        if noise_params is not None:
            noise = _Process(
                "noise_node",
                [
                    *_module("grade_noise.node.noise_node"),
                    "--ros-args",
                    "--params-file",
                    str(noise_params),
                    "-p",
                    "use_sim_time:=true",
                ],
                env,
                workdir,
            )
            procs.append(noise)
        for c in counters.values():
            _wait_for(c, READY_LINE, 120.0)
        sim = _Process(
            "sim_node",
            [
                *_module("grade_sim.node.sim_node"),
                "--ros-args",
                "-p",
                f"scenario:={scenario}",
                "-p",
                f"duration_s:={duration_s}",
                "-p",
                "realtime:=true",
                "-p",
                f"start_delay_s:={start_delay_s}",
                "-p",
                f"pace_publishing:={str(paced).lower()}",
                *(("-p", f"output_dir:={workdir / 'run'}") if record else ()),
            ],
            env,
            workdir,
        )
        procs.append(sim)
        _wait_for(sim, _SIM_STARTED, 120.0)
        # Read the socket tables while everything runs (publishers and readers all created).
        time.sleep(min(start_delay_s, 2.0))
        sockets = {p.label: bound_sockets(p.popen.pid) for p in procs if p.popen.poll() is None}
        try:
            code = sim.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired as err:
            raise RuntimeError(
                f"sim_node did not finish in {timeout_s} s of wall-clock time (a machine too "
                "busy for the scenario at real time; give more with --timeout-s)"
            ) from err
        if code != 0:
            raise RuntimeError(f"sim_node exited with {code}:\n{sim.text()[-3000:]}")
        sim.stop()
        time.sleep(2.0)  # the last messages in flight, noise_node's last frames
        noise_published: dict[str, int] = {}
        if noise is not None:
            noise.stop()
            noise_published = _counts(noise.text(), NOISE_COUNTS_PREFIX, "noise_node")
            time.sleep(1.0)
        received = {}
        timing = {}
        for qos, c in counters.items():
            c.stop()
            received[qos] = _counts(c.text(), RECEIVED_COUNTS_PREFIX, c.label)
            timing[qos] = _counts(c.text(), PUBLISH_TIMING_PREFIX, c.label)
        published = _counts(sim.text(), SIM_COUNTS_PREFIX, "sim_node")
        inputs = {} if noise_params is None else _noise_inputs(noise_params)
        return DeliveryResult(
            published, noise_published, received, sockets, sim.text(), inputs, timing
        )
    finally:
        for p in procs:
            p.stop()


def _counter_name(qos: str, depth: int | None, several: bool) -> str:
    return f"{qos} depth {depth}" if several else qos


def _noise_inputs(params: Path) -> dict[str, str]:
    """noise_node's output topic -> input topic, from its parameters file."""
    doc = yaml.safe_load(params.read_text())
    values = next(iter(doc.values()))["ros__parameters"]
    return dict(zip(values["output_topics"], values["input_topics"], strict=True))


def _config_root() -> Path:
    """The folder holding config/ (installed share/grade, else the source tree)."""
    return default_scenario_path().parent.parent


def format_report(result: DeliveryResult) -> str:
    """A table: topic, published, received and delivered fraction per QoS profile."""
    qos_names = sorted(result.received)
    lines = [f"{'topic':48s} {'published':>9s} " + " ".join(f"{q:>20s}" for q in qos_names)]
    worst = 1.0
    for topic, sent in sorted(result.all_published().items()):
        cells = []
        for q in qos_names:
            got = result.received[q].get(topic, 0)
            frac = got / sent if sent else 1.0
            worst = min(worst, frac)
            cells.append(f"{got:>9d} ({100 * frac:6.2f} %)")
        lines.append(f"{topic:48s} {sent:>9d} " + " ".join(f"{c:>20s}" for c in cells))
    lines.append(f"worst topic: {100 * worst:.2f} % delivered (target {100 * TARGET_FRACTION} %)")
    lines.extend(_timing_lines(result))
    for noisy, source in sorted(result.noise_inputs.items()):
        sent, made = result.published.get(source, 0), result.noise_published.get(noisy, 0)
        share = 100 * made / sent if sent else 0.0
        lines.append(f"noise_node kept up: {noisy} {made} of {sent} {source} ({share:.2f} %)")
    bad = result.non_loopback()
    lines.append(
        "sockets: all bound to loopback"
        if not bad
        else f"sockets NOT on loopback: { {p: [str(s) for s in v] for p, v in bad.items()} }"
    )
    return "\n".join(lines)


def delivery_table(result: DeliveryResult) -> ResultTable:
    """The report's counts as a results table: published and received per QoS profile."""
    qos_names = sorted(result.received)
    rows: tuple[tuple[Cell, ...], ...] = tuple(
        (topic, sent, *(result.received[q].get(topic, 0) for q in qos_names))
        for topic, sent in sorted(result.all_published().items())
    )
    columns = ("topic", "published", *(f"received, {q}" for q in qos_names))
    return ResultTable("Messages published and received per subscriber QoS", columns, rows)


# The counter that receives every message shows how the publisher wrote them.
_TIMING_FROM = "reliable"


def _timing_lines(result: DeliveryResult) -> list[str]:
    """Per topic: the gaps between its publications and its largest burst (a burst larger than
    a best-effort subscriber's depth loses messages when its executor runs late)."""
    # Of several reliable counters (several depths), the one that received the most.
    timing = max(
        (t for q, t in result.timing.items() if q.startswith(_TIMING_FROM)),
        key=lambda t: sum(int(v["messages"]) for v in t.values()),
        default={},
    )
    if not timing:
        return []
    lines = [
        f"publish timing (source timestamps seen by the {_TIMING_FROM} counter): gap p50 / p99 /"
        " max ms, largest burst (messages within 1 ms)"
    ]
    for topic, t in sorted(timing.items()):
        lines.append(
            f"  {topic:46s} {t['gap_p50_ms']:8.2f} {t['gap_p99_ms']:8.2f} {t['gap_max_ms']:8.2f}"
            f" {int(t['burst_max']):6d}"
        )
    return lines


def _depths(text: str) -> tuple[int | None, ...]:
    try:
        depths = tuple(int(word) for word in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a depth or comma-separated depths, e.g. 5 or 5,50,200"
        ) from err
    if not depths or min(depths) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every depth must be 1 or more")
    return depths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="grade bench delivery", description=__doc__)
    parser.add_argument("--scenario", type=Path, default=None, help="default: indoor_uav.yaml")
    parser.add_argument("--duration-s", type=float, default=10.0, help="simulated seconds (10)")
    parser.add_argument("--no-noise", action="store_true", help="without noise_node")
    parser.add_argument(
        "--hogs", type=int, default=0, help="busy-loop CPU hog processes to run meanwhile (0)"
    )
    parser.add_argument(
        "--depth",
        type=_depths,
        default=(None,),
        help="the counters' history depth (topic_counter's default); a comma-separated list "
        "runs one counter per depth and QoS, e.g. 5,50,200",
    )
    parser.add_argument(
        "--no-pacing",
        action="store_true",
        help="sim_node publishes each message as soon as simulated (pace_publishing:=false)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="the simulator also records its run directory (bag, ground truth), as record:=true",
    )
    parser.add_argument(
        "--timeout-s",
        type=float,
        default=600.0,
        help="wall-clock seconds the simulator may take for the run (600)",
    )
    add_json_argument(parser)
    args, _ = parser.parse_known_args(argv)
    if not args.timeout_s > 0:
        parser.error(f"--timeout-s {args.timeout_s}: give a number of seconds > 0")
    if args.hogs < 0:
        parser.error(f"--hogs {args.hogs}: give 0 or more busy-loop processes")
    noise_params = None if args.no_noise else _config_root() / "config" / "noise.yaml"
    with (
        tempfile.TemporaryDirectory(prefix="grade-bench-delivery-") as tmp,
        cpu_hogs(args.hogs),
    ):
        result = run_delivery(
            scenario=args.scenario or default_scenario_path(),
            duration_s=args.duration_s,
            noise_params=noise_params,
            workdir=Path(tmp),
            counter_depths=args.depth,
            paced=not args.no_pacing,
            record=args.record,
            timeout_s=args.timeout_s,
        )
        load = os.getloadavg()  # while the hogs still run
    print(format_report(result))
    print(f"CPU hogs: {args.hogs} busy-loop processes on {os.cpu_count()} cores")
    print("load average (1, 5, 15 min): " + ", ".join(f"{v:.1f}" for v in load))
    for line in result.sim_log.splitlines():
        if "real-time factor" in line or "pac" in line:
            print(line.strip())
    notes = f"CPU hogs: {args.hogs} busy-loop processes on {os.cpu_count()} cores."
    write_results(args.json, "delivery", argv, [delivery_table(result)], notes)
    return 0
