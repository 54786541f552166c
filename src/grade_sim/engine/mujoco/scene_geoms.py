"""A scene's geom entries (`mjvScene.geoms`) as one numpy record array over MuJoCo's own memory.

The bindings hand out one Python object per entry: reading a field of the ~230 entries of the
default scenario's scene costs about 1 ms a pass that way, on the render thread and holding the
GIL, where a record view reads it in one numpy operation. The view also lets the colour pass
reorder the entries in place (`draw_order`).

Only the fields grade reads are named; the record size is MuJoCo's. The layout is checked once
against the bindings (every named field written through them and read back through the view, and
the distance between two entries), so a MuJoCo whose `mjvGeom` differs fails at start-up with
the version named instead of reading the wrong bytes.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_sim.errors import BackendError

# mjvGeom of MuJoCo 4.0 (include/mujoco/mjvisualize.h): the fields read here, at their offsets.
_FIELDS: dict[str, tuple[str | tuple[str, tuple[int]], int]] = {
    "type": ("<i4", 0),
    "objtype": ("<i4", 8),
    "objid": ("<i4", 12),
    "segid": ("<i4", 36),
    "size": (("<f4", (3,)), 40),
    "pos": (("<f4", (3,)), 52),
    "mat": (("<f4", (9,)), 64),
}
GEOM_BYTES = 256
GEOM_RECORD = np.dtype(
    {
        "names": list(_FIELDS),
        "formats": [f for f, _ in _FIELDS.values()],
        "offsets": [o for _, o in _FIELDS.values()],
        "itemsize": GEOM_BYTES,
    }
)

_PROBE_MODEL = """<mujoco><worldbody>
<geom type="box" size="1 2 3"/><geom type="sphere" pos="0 0 5" size="1"/>
</worldbody></mujoco>"""


def _entries_address(vscene: Any) -> int:
    """Address of the first entry: its `size` field's, less that field's offset (the bindings
    give array fields as numpy views of MuJoCo's memory, and scalars as copies)."""
    size = vscene.geoms[0].size
    return int(size.ctypes.data) - _FIELDS["size"][1]


@functools.cache
def check_layout(mj: Any) -> None:
    """Raise BackendError unless GEOM_RECORD matches this MuJoCo's mjvGeom (checked once)."""
    model = mj.MjModel.from_xml_string(_PROBE_MODEL)
    vscene = mj.MjvScene(model, maxgeom=2)
    address = _entries_address(vscene)
    records = _view(address, 2)
    first, second = vscene.geoms[0], vscene.geoms[1]
    problems = []
    stride = int(second.size.ctypes.data) - int(first.size.ctypes.data)
    if stride != GEOM_BYTES:
        problems.append(f"entries {stride} bytes apart, expected {GEOM_BYTES}")
    for k, name in enumerate(("type", "objtype", "objid", "segid")):
        setattr(second, name, 1001 + k)
        if int(records[1][name]) != 1001 + k:
            problems.append(f"{name} not at byte {_FIELDS[name][1]}")
    for name in ("size", "pos", "mat"):
        values = np.arange(1.0, 1.0 + getattr(second, name).size, dtype=np.float32)
        getattr(second, name)[...] = values.reshape(getattr(second, name).shape)
        if not np.array_equal(records[1][name], values):
            problems.append(f"{name} not at byte {_FIELDS[name][1]}")
    if problems:
        raise BackendError(
            f"mujoco {mj.__version__}: its mjvGeom does not have the layout grade_sim reads "
            f"({'; '.join(problems)}); grade pins the MuJoCo it reads in requirements/pip-only.txt "
            "(make setup installs it)"
        )


def _bytes(address: int, n: int) -> NDArray[np.uint8]:
    raw = (ctypes.c_uint8 * (n * GEOM_BYTES)).from_address(address)
    return np.frombuffer(memoryview(raw), dtype=np.uint8).reshape(n, GEOM_BYTES)


def _view(address: int, n: int) -> NDArray[np.void]:
    return _bytes(address, n).reshape(-1).view(GEOM_RECORD)


class SceneGeoms:
    """The entries of one mjvScene, as records (named fields) and as whole entries (bytes).

    Both are writable views of the scene's memory, valid while the scene lives (kept here).
    Whole entries are what a reorder moves: a record copy would keep only the named fields.
    """

    def __init__(self, mj: Any, vscene: Any) -> None:
        check_layout(mj)
        self._vscene = vscene
        address = _entries_address(vscene)
        self._records = _view(address, int(vscene.maxgeom))
        self._entries = _bytes(address, int(vscene.maxgeom))

    @property
    def scene(self) -> Any:
        """The mjvScene itself."""
        return self._vscene

    @property
    def records(self) -> NDArray[np.void]:
        """This frame's entries (the first `ngeom`), GEOM_RECORD fields."""
        return self._records[: self._vscene.ngeom]

    @property
    def entries(self) -> NDArray[np.uint8]:
        """This frame's entries as (ngeom, itemsize) bytes."""
        return self._entries[: self._vscene.ngeom]
