"""`grade eval` reading a trajectory from a bag with a flipped byte: a clear error that names
the damaged chunk's topics and times."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_common import ros_distro
from grade_common.bagfile.compression import Compression
from grade_common.bagfile.rosbag2 import BagOutput
from grade_common.bagfile.scan import scan_mcap
from grade_eval.errors import FormatError
from grade_eval.io.bag import read_bag_trajectory

POSE = "geometry_msgs/msg/PoseStamped"


def test_a_flipped_byte_names_topic_and_time(tmp_path: Path) -> None:
    store = ros_distro.typestore()
    t = store.types
    bag = tmp_path / "bag"
    writer = BagOutput(bag, Compression.NONE)
    conn = writer.add_connection("/r1/pose", POSE, typestore=store)
    for k in range(90):  # 3 s at 30 Hz: three chunks of one second each
        ns = 10**9 + k * 10**9 // 30
        msg = t[POSE](
            header=t["std_msgs/msg/Header"](
                stamp=t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9),
                frame_id="world",
            ),
            pose=t["geometry_msgs/msg/Pose"](
                position=t["geometry_msgs/msg/Point"](x=float(k), y=0.0, z=0.0),
                orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            ),
        )
        writer.write(conn, ns, store.serialize_cdr(msg, POSE))
    writer.close()
    assert len(read_bag_trajectory(bag, "/r1/pose").stamps_s) == 90
    mcap = bag / "bag.mcap"
    offset, length = scan_mcap(mcap).chunk_records[1]
    data = bytearray(mcap.read_bytes())
    data[offset + length - 20] ^= 0xFF  # inside the last message's position values
    mcap.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"chunk at byte \d+ \(/r1/pose; log time 2\.000 s"):
        read_bag_trajectory(bag, "/r1/pose")
