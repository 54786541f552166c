"""The local transport with real processes: the simulator at real-time pace, a reliable and a
best-effort subscriber process; every message arrives, and no process binds a socket outside
loopback (read from the kernel's socket tables while they run)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from grade_common.transport import (
    DISCOVERY_RANGE_ENV,
    PROFILE_ENV,
    PROFILE_RELPATH,
    bound_sockets,
    local_transport_environment,
)

SMALL = Path(__file__).resolve().parents[1] / "grade_sim" / "node" / "data" / "indoor_small.yaml"


def test_socket_table_sees_a_non_loopback_bind() -> None:
    # The check the transport test relies on must be able to fail: bind 0.0.0.0 here.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        port = s.getsockname()[1]
        mine = [b for b in bound_sockets(os.getpid()) if b.port == port]
    assert [(b.table, b.address, b.is_loopback) for b in mine] == [("udp", "0.0.0.0", False)]


def test_environment_names_the_shipped_profile(repo_root: Path) -> None:
    env = local_transport_environment(repo_root / PROFILE_RELPATH)
    assert env == {
        PROFILE_ENV: str(repo_root / "config/fastdds/localhost.xml"),
        DISCOVERY_RANGE_ENV: "SYSTEM_DEFAULT",
    }
    with pytest.raises(FileNotFoundError, match=r"nope\.xml"):
        local_transport_environment(repo_root / "nope.xml")


@pytest.mark.ros
@pytest.mark.slow
def test_reliable_and_best_effort_subscribers_receive_every_message(tmp_path: Path) -> None:
    from grade_cli.delivery import run_delivery

    result = run_delivery(
        scenario=SMALL, duration_s=3.0, noise_params=None, workdir=tmp_path, start_delay_s=4.0
    )
    assert result.published["/uav1/camera/rgb/image_raw"] >= 3 * 30
    assert result.published["/uav1/imu"] >= 3 * 240
    received = {
        qos: {t: result.received[qos].get(t, 0) for t in result.published}
        for qos in ("reliable", "sensor_data")
    }
    assert received == {"reliable": result.published, "sensor_data": result.published}
    assert set(result.sockets) == {"counter_reliable", "counter_sensor_data", "sim_node"}
    assert all(result.sockets.values()), result.sockets  # each process had sockets to check
    assert result.non_loopback() == {}
