"""`grade doctor`'s core: findings (what works, what does not, and the one command that fixes
it), the probes that run in a child process, and the report.

Anything that can abort or hang a process (rclpy and its RMW, a GL or Vulkan context, a venv's
import) is probed in a child Python, so one broken part never hides the others and the doctor
itself imports no rclpy. The checks of the other packages' parts are assembled in
grade_cli.doctor.
"""

from __future__ import annotations

import enum
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROBE_TIMEOUT_S = 120.0
TAIL_LINES = 3


class Need(enum.StrEnum):
    """A required part breaks `make demo`/`make test`; an optional one only its own command."""

    REQUIRED = "required"
    OPTIONAL = "optional"


class State(enum.StrEnum):
    OK = "ok"
    MISSING = "missing"  # not installed (an optional part: its install command fixes it)
    BROKEN = "broken"  # installed, or required, but does not work


@dataclass(frozen=True)
class Finding:
    """One line of the report: the part, whether it works, what was seen, and the fix."""

    part: str
    need: Need
    state: State
    detail: str
    fix: str = ""  # the one command (make target) or step that fixes it; '' when OK

    @property
    def blocks(self) -> bool:
        """A required part that does not work: grade doctor exits non-zero."""
        return self.need is Need.REQUIRED and self.state is not State.OK


@dataclass(frozen=True)
class ProbeResult:
    """What a child Python printed: `ok` when it exited 0; `error` is its last stderr lines."""

    ok: bool
    stdout: str
    error: str


def probe(
    python: str,
    code: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> ProbeResult:
    """Run `python -c code` in a child process and report how it ended."""
    if not Path(python).is_file():
        return ProbeResult(False, "", f"{python} does not exist")
    try:
        proc = subprocess.run(
            [python, "-c", code],
            env=dict(os.environ if env is None else env),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(False, "", f"did not finish in {timeout_s:.0f} s")
    if proc.returncode == 0:
        return ProbeResult(True, proc.stdout, "")
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    why = f"exit {proc.returncode}" if proc.returncode > 0 else f"signal {-proc.returncode}"
    tail = " | ".join(lines[-TAIL_LINES:])
    return ProbeResult(False, proc.stdout, f"{why}: {tail}" if tail else why)


def last_json(stdout: str) -> dict[str, Any]:
    """The JSON object on the last line a probe printed ({} if none)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            data = json.loads(line)
            return data if isinstance(data, dict) else {}
    return {}


# rclpy with this environment's RMW and transport: a node, then the sockets it bound.
_ROS_PROBE = """
import json, os
from grade_common import ros_distro, transport
out = {"distro": ros_distro.current_distro().value, "rclpy": ros_distro.rclpy_version()}
import rclpy
from rclpy.utilities import get_rmw_implementation_identifier
rclpy.init()
node = rclpy.create_node("grade_doctor")
out["rmw"] = get_rmw_implementation_identifier()
out["sockets"] = [f"{s.table} {s.address}:{s.port}" for s in transport.bound_sockets(os.getpid())
                  if not s.is_loopback]
out["profile"] = os.environ.get(ros_distro.fastdds_profile_env(), "")
node.destroy_node()
rclpy.shutdown()
print(json.dumps(out))
"""


def ros_findings(python: str, setup_fix: str, transport_fix: str) -> list[Finding]:
    """The ROS 2 distro, rclpy and RMW (one node in a child process), and whether that node's
    sockets all stay on loopback (grade's Fast DDS profile)."""
    result = probe(python, _ROS_PROBE)
    data = last_json(result.stdout) if result.ok else {}
    if not data:
        broken = f"rclpy does not start: {result.error}"
        return [
            Finding("ROS 2", Need.REQUIRED, State.BROKEN, broken, setup_fix),
            Finding("loopback transport", Need.REQUIRED, State.BROKEN, "no node", setup_fix),
        ]
    ros = Finding(
        "ROS 2",
        Need.REQUIRED,
        State.OK,
        f"{data['distro']}, rclpy {data['rclpy'] or '(version unknown)'}, RMW {data['rmw']}",
    )
    outside = list(data["sockets"])
    if outside:
        shown = ", ".join(outside[:3]) + (" ..." if len(outside) > 3 else "")
        transport = Finding(
            "loopback transport",
            Need.REQUIRED,
            State.BROKEN,
            f"a node binds sockets outside loopback ({shown})",
            transport_fix,
        )
    else:
        how = f"Fast DDS profile {data['profile']}" if data["profile"] else "RMW settings"
        transport = Finding(
            "loopback transport", Need.REQUIRED, State.OK, f"every socket on 127.0.0.1 ({how})"
        )
    return [ros, transport]


# An offscreen GL context through MuJoCo (MUJOCO_GL: egl or osmesa) and its GL_RENDERER.
_GL_PROBE = """
import json, os
import mujoco
ctx = mujoco.GLContext(16, 16)
ctx.make_current()
from OpenGL import GL
raw = GL.glGetString(GL.GL_RENDERER)
print(json.dumps({"backend": os.environ.get("MUJOCO_GL", ""),
                  "renderer": raw.decode() if isinstance(raw, bytes) else str(raw)}))
ctx.free()
"""
_CPU_RENDERERS = ("llvmpipe", "softpipe", "swrast")


def gl_finding(python: str, fix: str) -> Finding:
    """Which GL renderer the cameras get: a GPU, or Mesa's llvmpipe on the CPU."""
    result = probe(python, _GL_PROBE)
    data = last_json(result.stdout) if result.ok else {}
    if not data:
        return Finding("GL renderer", Need.REQUIRED, State.BROKEN, result.error, fix)
    renderer = str(data["renderer"])
    where = "CPU" if any(n in renderer.lower() for n in _CPU_RENDERERS) else "GPU"
    backend = str(data["backend"]).upper() or "default"
    return Finding("GL renderer", Need.REQUIRED, State.OK, f"{renderer} ({where}, {backend})")


def import_finding(
    part: str,
    python: str,
    code: str,
    need: Need,
    fix: str,
    *,
    env: Mapping[str, str] | None = None,
) -> Finding:
    """Run `code` (it prints one line describing what it found) in `python`."""
    result = probe(python, code, env=env)
    if result.ok:
        lines = result.stdout.strip().splitlines()
        return Finding(part, need, State.OK, lines[-1] if lines else "works")
    missing = "No module named" in result.error or "does not exist" in result.error
    return Finding(part, need, State.MISSING if missing else State.BROKEN, result.error, fix)


def disk_finding(folder: Path, need_bytes: int, what: str) -> Finding:
    """Free space where runs are written, against `need_bytes` (`what` says for what)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    detail = f"{free / 2**30:.1f} GiB free at {existing}; {what} needs {need_bytes / 2**20:.0f} MiB"
    if free >= need_bytes:
        return Finding("free disk", Need.REQUIRED, State.OK, detail)
    fix = f"free {(need_bytes - free) / 2**20:.0f} MiB or write runs elsewhere (DEMO_OUT=DIR)"
    return Finding("free disk", Need.REQUIRED, State.BROKEN, detail, fix)


def cache_finding(part: str, folder: Path, fix: str) -> Finding:
    """A cache folder: its size if it exists, whether it can be created or written."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        return Finding(part, Need.OPTIONAL, State.BROKEN, f"{existing} is not writable", fix)
    if not folder.is_dir():
        return Finding(part, Need.OPTIONAL, State.OK, f"{folder} (empty; fills on first use)")
    files = [p for p in folder.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    return Finding(
        part, Need.OPTIONAL, State.OK, f"{folder} ({len(files)} files, {size / 2**20:.0f} MiB)"
    )


def report_lines(findings: Sequence[Finding]) -> list[str]:
    """One line per part (`ok`/`missing`/`broken`, the part, what was seen), and an indented
    `-> fix` line under each that does not work."""
    width = max((len(f.part) for f in findings), default=0)
    lines = []
    for f in findings:
        need = "" if f.need is Need.REQUIRED else " (optional)"
        lines.append(f"{f.state.value:<7} {f.part:<{width}}  {f.detail}{need}")
        if f.state is not State.OK and f.fix:
            lines.append(f"{'':<8}{'':<{width}}  -> {f.fix}")
    return lines


def summary_line(findings: Sequence[Finding]) -> str:
    """One line: how many parts work, and which required/optional ones do not."""
    blocking = [f.part for f in findings if f.blocks]
    optional = [f.part for f in findings if not f.blocks and f.state is not State.OK]
    ok = sum(f.state is State.OK for f in findings)
    text = f"grade doctor: {ok}/{len(findings)} parts work"
    if optional:
        text += f"; optional, not working: {', '.join(optional)}"
    if blocking:
        text += f"; REQUIRED, broken: {', '.join(blocking)} (run `grade doctor` for the fixes)"
    return text


def exit_code(findings: Sequence[Finding]) -> int:
    """1 when a required part does not work, else 0."""
    return 1 if any(f.blocks for f in findings) else 0
