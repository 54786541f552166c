"""The local DDS transport: grade's Fast DDS profile, the environment that loads it, and a check
that a process binds sockets on loopback only.

Fast DDS reads the XML profile named by FASTDDS_DEFAULT_PROFILES_FILE (Fast DDS 3.x: Kilted) or
FASTRTPS_DEFAULT_PROFILES_FILE (Fast DDS 2.14: Jazzy); the environment names the one of this distro
(grade_common.ros_distro.fastdds_profile_env). The launch files set both, since they cannot tell
the distro (Kilted then logs that the older name is deprecated). rmw_fastrtps_cpp keeps the
profile's transports only when ROS_AUTOMATIC_DISCOVERY_RANGE is SYSTEM_DEFAULT (or SUBNET): with
LOCALHOST it appends its own UDP transport without an interface allowlist, which binds 0.0.0.0 and
every outside address. The profile itself keeps discovery on 127.0.0.1 (unicast initial peers, no
multicast), so it replaces LOCALHOST rather than widening it. See docs/transport.md.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from grade_common.ros_distro import fastdds_profile_env
from grade_common.share import shipped_file

PROFILE_ENV = "FASTDDS_DEFAULT_PROFILES_FILE"
# The name Fast DDS 2.x (ROS 2 Jazzy) reads; Fast DDS 3 reads PROFILE_ENV.
FASTDDS2_PROFILE_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"
DISCOVERY_RANGE_ENV = "ROS_AUTOMATIC_DISCOVERY_RANGE"
# The profile decides discovery; LOCALHOST would make the RMW add an unrestricted UDP transport.
DISCOVERY_RANGE_WITH_PROFILE = "SYSTEM_DEFAULT"
# Relative to the repository root and to the installed share/grade folder alike.
PROFILE_RELPATH = Path("config") / "fastdds" / "localhost.xml"
RMW_ENV = "RMW_IMPLEMENTATION"
# The RMWs that read the Fast DDS profile; the first is ROS 2's default.
FASTDDS_RMWS = ("rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")
# Another RMW (e.g. rmw_cyclonedds_cpp) ignores the profile; LOCALHOST at least limits discovery.
DISCOVERY_RANGE_WITHOUT_PROFILE = "LOCALHOST"

_SOCKET_TABLES = ("udp", "udp6", "tcp", "tcp6")
_TCP_LISTEN = "0A"


def local_transport_environment(profile: Path) -> dict[str, str]:
    """The environment variables that make a ROS 2 process use `profile` (grade's localhost.xml).

    Raises:
        FileNotFoundError: `profile` does not exist (a typo would silently fall back to the
            RMW's defaults, which bind every interface).
    """
    if not profile.is_file():
        raise FileNotFoundError(f"Fast DDS profile {profile} does not exist")
    return {
        fastdds_profile_env(): str(profile),
        DISCOVERY_RANGE_ENV: DISCOVERY_RANGE_WITH_PROFILE,
    }


def transport_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables every grade process and every process grade starts gets, so that ROS 2
    traffic stays on this machine: the shipped profile with SYSTEM_DEFAULT for Fast DDS (the
    RMW named by RMW_IMPLEMENTATION in `environ`, default os.environ; unset means Fast DDS),
    LOCALHOST for any other RMW. `source scripts/env.sh` exports exactly these (`main`).

    Raises:
        FileNotFoundError: the shipped profile is missing (a broken installation).
    """
    env = os.environ if environ is None else environ
    if env.get(RMW_ENV, FASTDDS_RMWS[0]) in FASTDDS_RMWS:
        return local_transport_environment(shipped_file(PROFILE_RELPATH.as_posix()))
    return {DISCOVERY_RANGE_ENV: DISCOVERY_RANGE_WITHOUT_PROFILE}


@dataclass(frozen=True)
class BoundSocket:
    """A socket a process has bound: protocol table (udp, udp6, tcp, tcp6), address, port."""

    table: str
    address: str
    port: int

    @property
    def is_loopback(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback


def _decode_address(hex_address: str) -> str:
    # /proc/net/{udp,tcp}[6] print addresses as host-order 32-bit words in hex.
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def _socket_inodes(pid: int, proc: Path) -> set[str]:
    inodes: set[str] = set()
    fd_dir = proc / str(pid) / "fd"
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed between listing and reading
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def bound_sockets(pid: int, proc: Path = Path("/proc")) -> list[BoundSocket]:
    """Every UDP socket and listening TCP socket of process `pid`, from the kernel's tables.

    Raises:
        OSError: the process does not exist (or its fds cannot be read).
    """
    inodes = _socket_inodes(pid, proc)
    found: list[BoundSocket] = []
    for table in _SOCKET_TABLES:
        path = proc / str(pid) / "net" / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            cols = line.split()
            if len(cols) < 10 or cols[9] not in inodes:
                continue
            if table.startswith("tcp") and cols[3] != _TCP_LISTEN:
                continue
            address, port = cols[1].split(":")
            found.append(BoundSocket(table, _decode_address(address), int(port, 16)))
    return found


def main() -> int:
    """Print `transport_environment()` as shell `export` lines (scripts/env.sh evaluates them)."""
    try:
        env = transport_environment()
    except FileNotFoundError as err:
        print(f"grade_common.transport: {err}", file=sys.stderr)
        return 1
    for name, value in env.items():
        print(f"export {name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
