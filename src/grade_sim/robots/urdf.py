"""A robot body from a URDF file, flattened onto one rigid `base_link` for the virtual joints.

GRADE's robots are moved by virtual joints (x, y, z, yaw, pitch, roll); a user's URDF supplies
only what the body looks like and what it collides with. This reader keeps exactly that:

- every link's visual and collision geometry (box, cylinder, sphere, mesh) with its origin,
  expressed in the frame of the chosen base link (the URDF's root link by default);
- materials as RGBA (URDF textures are not used);
- the total mass, centre of mass and inertia (about the centre of mass, base-link axes) of all
  `<inertial>` tags, or none when the URDF has no mass.

Joints are flattened: a `fixed` joint places its child link rigidly, and every other joint
(revolute, continuous, prismatic, floating, planar) is **treated as fixed at position zero**. Those
joints are listed in `UrdfRobot.frozen_joints` and logged as a warning: the virtual joints drive
the body, a URDF joint never moves. Sensors are not read from the URDF either; cameras and the IMU
stay mounted by the scenario relative to base_link.

Meshes (STL, OBJ, DAE, PLY, GLB/GLTF) are read through trimesh into vertices and faces;
`package://pkg/...` names are looked up in the URDF's ancestor folders named `pkg`, then in
`$AMENT_PREFIX_PATH/share/pkg`. Only numpy, the standard library and trimesh (imported when a
mesh is read) are used; xacro files must be expanded first.
"""

from __future__ import annotations

import enum
import logging
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import ConfigError
from grade_common.rotations import matrix_to_quat, quat_from_rpy, quat_to_matrix
from grade_common.types import FloatArray

_LOG = logging.getLogger(__name__)

DEFAULT_RGBA = (0.6, 0.6, 0.62, 1.0)
MESH_SUFFIXES = (".stl", ".obj", ".dae", ".ply", ".glb", ".gltf")


class UrdfError(ConfigError):
    """A URDF file is missing, malformed, or uses something this reader cannot represent."""


class GeomShape(enum.Enum):
    BOX = "box"
    CYLINDER = "cylinder"
    SPHERE = "sphere"
    MESH = "mesh"


@dataclass(frozen=True, eq=False)
class UrdfGeom:
    """One visual or collision shape, posed in the base-link frame.

    `size` follows MuJoCo: box half extents (3), cylinder (radius, half length) along its z axis,
    sphere (radius,), mesh (). A mesh carries its (scaled) vertices in the geom frame.
    """

    name: str  # "<link>/visual<k>" or "<link>/collision<k>", unique in the robot
    shape: GeomShape
    size: tuple[float, ...]
    pos_base_xyz: FloatArray
    quat_base_wxyz: FloatArray
    rgba: tuple[float, float, float, float]
    vertices_xyz: FloatArray | None = None
    faces: NDArray[np.int64] | None = None


@dataclass(frozen=True, eq=False)
class UrdfRobot:
    """A URDF flattened to one rigid body in the frame of `base_link`."""

    path: Path
    name: str
    base_link: str
    visuals: tuple[UrdfGeom, ...]
    collisions: tuple[UrdfGeom, ...]
    # Mass properties of every <inertial>; None when the URDF has no positive mass.
    mass_kg: float | None
    com_base_xyz: FloatArray
    inertia_com_base: FloatArray  # 3x3 about the centre of mass, base-link axes
    frozen_joints: tuple[str, ...]  # non-fixed URDF joints held at zero


@dataclass(frozen=True)
class _Joint:
    name: str
    kind: str
    parent: str
    child: str
    transform_parent_child: FloatArray


_JOINT_KINDS = ("fixed", "revolute", "continuous", "prismatic", "floating", "planar")


def load_urdf(path: str | Path, base_link: str | None = None) -> UrdfRobot:
    """Read a URDF file and flatten it onto `base_link` (default: the URDF's root link).

    Raises:
        UrdfError: the file or a mesh is missing, the XML is broken, or an element is invalid;
            the message names the file and the element.
    """
    file = Path(path)
    if not file.is_file():
        raise UrdfError(f"URDF file {str(file)!r} does not exist")
    try:
        root = ET.parse(file).getroot()
    except ET.ParseError as err:
        raise UrdfError(f"{file}: not valid XML: {err}") from err
    if root.tag != "robot":
        raise UrdfError(f"{file}: the top element is <{root.tag}>; a URDF starts with <robot>")
    if any(k.startswith("{") and "xacro" in k for el in root.iter() for k in (el.tag, *el.attrib)):
        raise UrdfError(f"{file}: contains xacro macros; expand it first (xacro in.xacro > out)")
    reader = _Reader(file)
    return reader.read(root, base_link)


class _Reader:
    def __init__(self, file: Path) -> None:
        self.file = file
        self.materials: dict[str, tuple[float, float, float, float]] = {}

    def fail(self, where: str, what: str) -> UrdfError:
        return UrdfError(f"{self.file}: {where}: {what}")

    # -- attribute parsing ---------------------------------------------------------------------
    def numbers(self, el: ET.Element, attr: str, count: int, where: str) -> tuple[float, ...]:
        text = el.get(attr)
        if text is None:
            raise self.fail(where, f"attribute {attr!r} is missing")
        try:
            values = tuple(float(v) for v in text.split())
        except ValueError:
            raise self.fail(where, f"{attr}={text!r} is not {count} number(s)") from None
        if len(values) != count or not all(math.isfinite(v) for v in values):
            raise self.fail(where, f"{attr}={text!r} is not {count} finite number(s)")
        return values

    def positive(self, el: ET.Element, attr: str, count: int, where: str) -> tuple[float, ...]:
        values = self.numbers(el, attr, count, where)
        if any(v <= 0 for v in values):
            raise self.fail(where, f"{attr}={el.get(attr)!r} must be > 0")
        return values

    def origin(self, parent: ET.Element, where: str) -> FloatArray:
        """The 4x4 transform of a `<origin xyz rpy>` child (identity when absent)."""
        t = np.eye(4)
        el = parent.find("origin")
        if el is None:
            return t
        where = f"{where} <origin>"
        xyz = self.numbers(el, "xyz", 3, where) if "xyz" in el.attrib else (0.0, 0.0, 0.0)
        rpy = self.numbers(el, "rpy", 3, where) if "rpy" in el.attrib else (0.0, 0.0, 0.0)
        t[:3, :3] = quat_to_matrix(quat_from_rpy(*rpy))
        t[:3, 3] = xyz
        return t

    def material(self, el: ET.Element | None, where: str) -> tuple[float, float, float, float]:
        if el is None:
            return DEFAULT_RGBA
        where = f"{where} <material name={el.get('name', '')!r}>"
        color = el.find("color")
        if color is not None:
            r, g, b, a = self.numbers(color, "rgba", 4, f"{where} <color>")
            if not all(0.0 <= v <= 1.0 for v in (r, g, b, a)):
                raise self.fail(where, f"rgba={color.get('rgba')!r} must lie in [0, 1]")
            if el.get("name"):  # as in urdfdom, a named colour can be reused further down
                self.materials.setdefault(str(el.get("name")), (r, g, b, a))
            return (r, g, b, a)
        name = el.get("name")
        if name is not None and name in self.materials:
            return self.materials[name]
        if el.find("texture") is not None:
            return DEFAULT_RGBA  # textures are not used; the shape keeps the default colour
        raise self.fail(where, "has no <color> and names no material defined in <robot>")

    # -- structure -----------------------------------------------------------------------------
    def read(self, root: ET.Element, base_link: str | None) -> UrdfRobot:
        for el in root.findall("material"):
            name = el.get("name")
            if not name:
                raise self.fail("<robot> <material>", "attribute 'name' is missing")
            if el.find("color") is not None:
                self.materials[name] = self.material(el, "<robot>")
        links: dict[str, ET.Element] = {}
        for el in root.findall("link"):
            name = el.get("name")
            if not name:
                raise self.fail("<link>", "attribute 'name' is missing")
            if name in links:
                raise self.fail(f"<link name={name!r}>", "defined twice")
            links[name] = el
        if not links:
            raise self.fail("<robot>", "has no <link>")
        joints = [self.joint(el, links) for el in root.findall("joint")]
        parent_of: dict[str, _Joint] = {}
        for j in joints:
            if j.child in parent_of:
                raise self.fail(
                    f"<joint name={j.name!r}>",
                    f"link {j.child!r} already has parent joint {parent_of[j.child].name!r}; "
                    "a URDF is a tree",
                )
            parent_of[j.child] = j
        roots = [n for n in links if n not in parent_of]
        if len(roots) != 1:
            raise self.fail(
                "<robot>", f"expected one root link (a link no joint has as child), got {roots}"
            )
        transform_root_link = self.link_transforms(roots[0], joints, links)
        base = base_link or roots[0]
        if base not in links:
            raise UrdfError(
                f"{self.file}: urdf_base_link {base!r} is not a link of the URDF; "
                f"links: {sorted(links)}"
            )
        transform_base_root = np.linalg.inv(transform_root_link[base])
        transform_base_link = {n: transform_base_root @ t for n, t in transform_root_link.items()}
        visuals: list[UrdfGeom] = []
        collisions: list[UrdfGeom] = []
        inertials: list[tuple[float, FloatArray, FloatArray]] = []
        for name, el in links.items():
            t_base = transform_base_link[name]
            for kind, out in (("visual", visuals), ("collision", collisions)):
                for k, shape_el in enumerate(el.findall(kind)):
                    out.append(self.geom(shape_el, name, kind, k, t_base))
            inertial = el.find("inertial")
            if inertial is not None:
                inertials.append(self.inertial(inertial, f"<link name={name!r}>", t_base))
        frozen = tuple(j.name for j in joints if j.kind != "fixed")
        if frozen:
            _LOG.warning(
                "%s: joints %s are not fixed; they are held at zero (the virtual joints drive "
                "the body)",
                self.file,
                list(frozen),
            )
        mass, com, inertia = _combine(inertials)
        if mass is not None:
            moments = np.linalg.eigvalsh(inertia)
            if moments[0] <= 0 or moments[0] + moments[1] < moments[2] * (1 - 1e-9):
                raise self.fail(
                    "<inertial>",
                    f"the links' inertias add up to principal moments {moments.tolist()} "
                    "(kg m^2) about the centre of mass, which no rigid body has (each must be "
                    "> 0 and the two smaller must sum to at least the largest); give the "
                    "<inertia> tags physical values",
                )
        return UrdfRobot(
            path=self.file,
            name=root.get("name", self.file.stem),
            base_link=base,
            visuals=tuple(visuals),
            collisions=tuple(collisions),
            mass_kg=mass,
            com_base_xyz=com,
            inertia_com_base=inertia,
            frozen_joints=frozen,
        )

    def joint(self, el: ET.Element, links: dict[str, ET.Element]) -> _Joint:
        name = el.get("name", "")
        where = f"<joint name={name!r}>"
        if not name:
            raise self.fail("<joint>", "attribute 'name' is missing")
        kind = el.get("type", "")
        if kind not in _JOINT_KINDS:
            raise self.fail(where, f"type {kind!r} is not allowed; use one of {_JOINT_KINDS}")
        ends = []
        for tag in ("parent", "child"):
            sub = el.find(tag)
            link = sub.get("link") if sub is not None else None
            if not link:
                raise self.fail(where, f"<{tag} link=...> is missing")
            if link not in links:
                raise self.fail(where, f"<{tag} link={link!r}> names no <link>")
            ends.append(link)
        return _Joint(name, kind, ends[0], ends[1], self.origin(el, where))

    def link_transforms(
        self, root: str, joints: list[_Joint], links: dict[str, ET.Element]
    ) -> dict[str, FloatArray]:
        children: dict[str, list[_Joint]] = {}
        for j in joints:
            children.setdefault(j.parent, []).append(j)
        out = {root: np.eye(4)}
        stack = [root]
        while stack:
            parent = stack.pop()
            for j in children.get(parent, []):
                out[j.child] = out[parent] @ j.transform_parent_child
                stack.append(j.child)
        unreached = sorted(set(links) - set(out))
        if unreached:  # only a cycle can hide links from a single root
            raise self.fail("<robot>", f"links {unreached} are in a joint cycle")
        return out

    def geom(
        self, el: ET.Element, link: str, kind: str, index: int, t_base_link: FloatArray
    ) -> UrdfGeom:
        name = f"{link}/{kind}{index}"
        where = f"<link name={link!r}> <{kind}> #{index}"
        t = t_base_link @ self.origin(el, where)
        geometry = el.find("geometry")
        shapes = list(geometry) if geometry is not None else []
        if len(shapes) != 1:
            raise self.fail(where, "needs a <geometry> with exactly one shape")
        shape_el = shapes[0]
        gwhere = f"{where} <geometry> <{shape_el.tag}>"
        rgba = self.material(el.find("material"), where) if kind == "visual" else DEFAULT_RGBA
        pos = t[:3, 3].copy()
        quat = matrix_to_quat(t[:3, :3])
        if shape_el.tag == "box":
            size = tuple(v / 2 for v in self.positive(shape_el, "size", 3, gwhere))
            return UrdfGeom(name, GeomShape.BOX, size, pos, quat, rgba)
        if shape_el.tag == "cylinder":
            (radius,) = self.positive(shape_el, "radius", 1, gwhere)
            (length,) = self.positive(shape_el, "length", 1, gwhere)
            return UrdfGeom(name, GeomShape.CYLINDER, (radius, length / 2), pos, quat, rgba)
        if shape_el.tag == "sphere":
            radius_t = self.positive(shape_el, "radius", 1, gwhere)
            return UrdfGeom(name, GeomShape.SPHERE, radius_t, pos, quat, rgba)
        if shape_el.tag == "mesh":
            vertices, faces = self.mesh(shape_el, gwhere)
            return UrdfGeom(name, GeomShape.MESH, (), pos, quat, rgba, vertices, faces)
        raise self.fail(
            gwhere, f"unknown geometry {shape_el.tag!r}; allowed box, cylinder, sphere, mesh"
        )

    def mesh(self, el: ET.Element, where: str) -> tuple[FloatArray, NDArray[np.int64]]:
        filename = el.get("filename")
        if not filename:
            raise self.fail(where, "attribute 'filename' is missing")
        path = self.resolve(filename, where)
        scale = self.numbers(el, "scale", 3, where) if "scale" in el.attrib else (1.0, 1.0, 1.0)
        if any(s == 0 for s in scale):
            raise self.fail(where, f"scale={el.get('scale')!r} has a zero factor")
        if path.suffix.lower() not in MESH_SUFFIXES:
            raise self.fail(
                where, f"mesh {str(path)!r}: {path.suffix!r} is not one of {MESH_SUFFIXES}"
            )
        import trimesh

        try:
            loaded = trimesh.load(str(path), force="mesh")
        except Exception as err:  # trimesh raises many types for broken or unsupported files
            hint = " (DAE needs the 'pycollada' package)" if path.suffix.lower() == ".dae" else ""
            raise self.fail(where, f"cannot read mesh {str(path)!r}{hint}: {err}") from err
        if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
            raise self.fail(where, f"mesh {str(path)!r} holds no triangles")
        if len(loaded.vertices) < 4:
            raise self.fail(where, f"mesh {str(path)!r} has fewer than 4 vertices")
        vertices = np.asarray(loaded.vertices, dtype=np.float64) * np.asarray(scale)
        faces = np.asarray(loaded.faces, dtype=np.int64)
        if scale[0] * scale[1] * scale[2] < 0:  # a mirror turns the faces inside out
            faces = faces[:, ::-1].copy()
        return vertices, faces

    def resolve(self, filename: str, where: str) -> Path:
        tried: list[Path] = []
        if filename.startswith("package://"):
            package, _, rest = filename[len("package://") :].partition("/")
            tried += [d / rest for d in self.file.resolve().parents if d.name == package]
            for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
                tried.append(Path(prefix) / "share" / package / rest)
        elif filename.startswith("file://"):
            tried.append(Path(filename[len("file://") :]))
        else:
            p = Path(filename)
            tried.append(p if p.is_absolute() else self.file.parent / p)
        for candidate in tried:
            if candidate.is_file():
                return candidate
        raise self.fail(
            where,
            f"mesh file {filename!r} not found (looked at {[str(p) for p in tried] or 'nothing'})",
        )

    def inertial(
        self, el: ET.Element, where: str, t_base_link: FloatArray
    ) -> tuple[float, FloatArray, FloatArray]:
        where = f"{where} <inertial>"
        t = t_base_link @ self.origin(el, where)
        mass_el = el.find("mass")
        if mass_el is None:
            raise self.fail(where, "<mass value=...> is missing")
        (mass,) = self.numbers(mass_el, "value", 1, f"{where} <mass>")
        if mass < 0:
            raise self.fail(where, f"mass {mass} must be >= 0")
        inertia_el = el.find("inertia")
        inertia = np.zeros((3, 3))
        if inertia_el is not None:
            v = {
                k: self.numbers(inertia_el, k, 1, f"{where} <inertia>")[0]
                for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            }
            inertia = np.array(
                [
                    [v["ixx"], v["ixy"], v["ixz"]],
                    [v["ixy"], v["iyy"], v["iyz"]],
                    [v["ixz"], v["iyz"], v["izz"]],
                ]
            )
            if np.linalg.eigvalsh(inertia).min() < -1e-12:
                raise self.fail(where, "the inertia matrix is not positive semi-definite")
        r = t[:3, :3]
        return mass, t[:3, 3].copy(), r @ inertia @ r.T


def _combine(
    inertials: list[tuple[float, FloatArray, FloatArray]],
) -> tuple[float | None, FloatArray, FloatArray]:
    """Total mass, centre of mass and inertia about it (parallel-axis theorem)."""
    total = sum(m for m, _, _ in inertials)
    if total <= 0:
        return None, np.zeros(3), np.zeros((3, 3))
    com = sum((m * c for m, c, _ in inertials), np.zeros(3)) / total
    inertia = np.zeros((3, 3))
    for m, c, i in inertials:
        d = c - com
        inertia += i + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return float(total), com, inertia
