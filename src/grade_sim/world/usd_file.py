"""USD stages (.usd, .usda, .usdc, .usdz) as mesh-world parts, read with Pixar's usd-core.

What is read: every Mesh prim that is visible and does not move (no time-sampled transform on
it or above it, not skinned under a SkelRoot): its triangles (polygons fanned) in world
coordinates of the stage, its texture coordinates (primvar `st`, or the first texCoord2f
primvar), the UsdPreviewSurface material bound to it (diffuseColor, or a UsdUVTexture's image
times its `scale`, opacity) or else its displayColor, and its semantic class (Isaac Sim's
semantics, grade_sim.world.usd_semantics). Lights, cameras and moving prims (people, robots,
animated objects) are not part of a world and are skipped. Units and axes are the stage's:
`metersPerUnit` and `upAxis` come back with the parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import ConfigError
from grade_common.types import FloatArray
from grade_sim.world.usd_semantics import semantic_class

USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
WHERE = "environment.mesh.path"


@dataclass(frozen=True)
class UsdPart:
    """One static Mesh prim: world triangles (stage units, stage axes) and its surface."""

    name: str  # the prim's name
    material_name: str
    vertices_xyz: FloatArray
    faces: NDArray[np.int32]
    rgba: tuple[float, float, float, float] | None
    texcoords_uv: FloatArray | None  # per vertex, image convention (v = 0: first image row)
    texture_rgb: NDArray[np.uint8] | None
    semantic_class: str | None


@dataclass(frozen=True)
class UsdWorld:
    parts: list[UsdPart]
    meters_per_unit: float
    up_axis: str  # "y" or "z"
    skipped_moving: int  # Mesh prims left out because they move or are skinned


def _linear_to_srgb(c: FloatArray) -> FloatArray:
    c = np.clip(c, 0.0, 1.0)
    out: FloatArray = np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)
    return out


def read_usd_world(path: Path) -> UsdWorld:
    """The static meshes of a USD stage with their materials, labels, units and up axis.

    Raises:
        ConfigError: usd-core is missing, the stage cannot be opened, or a texture it names
            cannot be read (names the file).
    """
    try:
        from pxr import Usd, UsdGeom
    except ImportError as err:
        raise ConfigError(
            f"{WHERE}: reading {str(path)!r} needs Pixar's usd-core (pip install usd-core; "
            "requirements/base.txt)"
        ) from err
    try:
        stage = Usd.Stage.Open(str(path))
    except Exception as err:  # pxr raises Tf errors of its own type
        raise ConfigError(f"{WHERE}: cannot open USD stage {str(path)!r}: {err}") from err
    if stage is None:
        raise ConfigError(f"{WHERE}: cannot open USD stage {str(path)!r}")
    up = str(UsdGeom.GetStageUpAxis(stage)).lower()
    meters = float(UsdGeom.GetStageMetersPerUnit(stage))
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    images: dict[str, NDArray[np.uint8]] = {}
    parts: list[UsdPart] = []
    skipped = 0
    it = iter(Usd.PrimRange(stage.GetPseudoRoot()))
    for prim in it:
        if prim.GetTypeName() == "SkelRoot":
            skipped += sum(1 for p in Usd.PrimRange(prim) if p.IsA(UsdGeom.Mesh))
            it.PruneChildren()
            continue
        if not prim.IsA(UsdGeom.Mesh):
            continue
        if UsdGeom.Imageable(prim).ComputeVisibility() == UsdGeom.Tokens.invisible:
            continue
        if _moves(prim):
            skipped += 1
            continue
        part = _mesh_part(prim, cache, images, path)
        if part is not None:
            parts.append(part)
    return UsdWorld(parts, meters, "y" if up == "y" else "z", skipped)


def _moves(prim: Any) -> bool:
    """A transform on the prim or an ancestor is animated (time samples)."""
    from pxr import UsdGeom

    p = prim
    while p and not p.IsPseudoRoot():
        xf = UsdGeom.Xformable(p)
        if xf and xf.TransformMightBeTimeVarying():
            return True
        p = p.GetParent()
    return False


def _mesh_part(
    prim: Any, cache: Any, images: dict[str, NDArray[np.uint8]], stage_path: Path
) -> UsdPart | None:
    from pxr import UsdGeom

    mesh = UsdGeom.Mesh(prim)
    points = mesh.GetPointsAttr().Get()
    counts = mesh.GetFaceVertexCountsAttr().Get()
    indices = mesh.GetFaceVertexIndicesAttr().Get()
    if points is None or counts is None or indices is None or len(points) == 0:
        return None
    pts = np.asarray(points, dtype=np.float64)
    counts_a = np.asarray(counts, dtype=np.int64)
    idx = np.asarray(indices, dtype=np.int64)
    # Fan every polygon into triangles: (corner 0, i, i + 1); `corner` indexes face-varying data.
    tri_corners = []
    start = 0
    for n in counts_a.tolist():
        for i in range(1, n - 1):
            tri_corners.append((start, start + i, start + i + 1))
        start += n
    if not tri_corners:
        return None
    corners = np.asarray(tri_corners, dtype=np.int64)
    if str(mesh.GetOrientationAttr().Get()) == "leftHanded":
        corners = corners[:, ::-1]
    world = np.asarray(cache.GetLocalToWorldTransform(prim), dtype=np.float64)
    # USD matrices act on row vectors: p_world = [p, 1] @ M.
    pts = pts @ world[:3, :3] + world[3, :3]
    if np.linalg.det(world[:3, :3]) < 0:
        corners = corners[:, ::-1]
    material_name, rgba, texture, tint = _surface(prim, images, stage_path)
    uv = _texcoords(prim, len(pts), int(counts_a.sum())) if texture is not None else None
    if uv is not None and uv[0] == "faceVarying":
        # One vertex per face corner, so every corner keeps its own texture coordinate.
        flat = corners.ravel()
        vertices = pts[idx[flat]]
        faces = np.arange(len(flat), dtype=np.int32).reshape(-1, 3)
        st: FloatArray | None = uv[1][flat]
    else:
        vertices = pts
        faces = idx[corners].astype(np.int32)
        st = uv[1] if uv is not None else None
    texcoords = None
    if st is not None:
        texcoords = np.column_stack([st[:, 0], 1.0 - st[:, 1]])  # USD's v goes up
    else:
        texture = None
    if texture is not None and tint is not None:
        rgba = tint
    label = semantic_class(prim)
    return UsdPart(
        str(prim.GetName()), material_name, vertices, faces, rgba, texcoords, texture, label
    )


def _texcoords(prim: Any, n_points: int, n_corners: int) -> tuple[str, FloatArray] | None:
    """(interpolation, (N, 2) coordinates) of the mesh's st primvar, indices resolved."""
    from pxr import Sdf, UsdGeom

    api = UsdGeom.PrimvarsAPI(prim)
    primvar = api.GetPrimvar("st")
    if not primvar or not primvar.HasValue():
        primvar = next(
            (
                p
                for p in api.GetPrimvars()
                if p.GetTypeName()
                in (Sdf.ValueTypeNames.TexCoord2fArray, Sdf.ValueTypeNames.Float2Array)
                and p.HasValue()
            ),
            None,
        )
    if primvar is None:
        return None
    values = primvar.ComputeFlattened()
    if values is None:
        return None
    st = np.asarray(values, dtype=np.float64).reshape(-1, 2)
    interp = str(primvar.GetInterpolation())
    if interp == "faceVarying" and len(st) == n_corners:
        return "faceVarying", st
    if interp in ("vertex", "varying") and len(st) == n_points:
        return "vertex", st
    return None


def _surface(
    prim: Any, images: dict[str, NDArray[np.uint8]], stage_path: Path
) -> tuple[
    str,
    tuple[float, float, float, float] | None,
    NDArray[np.uint8] | None,
    tuple[float, float, float, float] | None,
]:
    """(material name, colour, texture image, the texture's tint as a colour) of a Mesh prim."""
    from pxr import UsdGeom, UsdShade

    rgba: tuple[float, float, float, float] | None = None
    display = UsdGeom.Gprim(prim).GetDisplayColorAttr().Get()
    if display is not None and len(display) > 0:
        c = np.asarray(display[0], dtype=np.float64)
        rgba = (float(c[0]), float(c[1]), float(c[2]), 1.0)
    material, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial()
    if not material:
        return "", rgba, None, None
    name = str(material.GetPrim().GetName())
    shader = material.ComputeSurfaceSource()[0]
    if not shader or shader.GetIdAttr().Get() != "UsdPreviewSurface":
        return name, rgba, None, None
    opacity_in = shader.GetInput("opacity")
    opacity = float(opacity_in.Get()) if opacity_in and opacity_in.Get() is not None else 1.0
    diffuse = shader.GetInput("diffuseColor")
    if diffuse is None:
        return name, rgba, None, None
    source = diffuse.GetConnectedSources()[0] if diffuse.HasConnectedSource() else []
    if source:
        tex = UsdShade.Shader(source[0].source.GetPrim())
        if tex.GetIdAttr().Get() == "UsdUVTexture":
            image = _texture_image(tex, images, stage_path)
            scale = tex.GetInput("scale")
            s = np.asarray(scale.Get(), dtype=np.float64) if scale and scale.Get() else np.ones(4)
            srgb = _linear_to_srgb(s[:3])
            tint = (float(srgb[0]), float(srgb[1]), float(srgb[2]), opacity)
            return name, rgba, image, tint
        return name, rgba, None, None
    value = diffuse.Get()
    if value is not None:
        srgb = _linear_to_srgb(np.asarray(value, dtype=np.float64))
        rgba = (float(srgb[0]), float(srgb[1]), float(srgb[2]), opacity)
    return name, rgba, None, None


def _texture_image(
    tex: Any, images: dict[str, NDArray[np.uint8]], stage_path: Path
) -> NDArray[np.uint8] | None:
    """The RGB image a UsdUVTexture names (read once per file; usdz members through Ar)."""
    import cv2

    file_in = tex.GetInput("file")
    asset = file_in.Get() if file_in else None
    if asset is None:
        return None
    resolved = str(asset.resolvedPath or "")
    if not resolved:
        raise ConfigError(
            f"{WHERE}: {str(stage_path)!r}: texture {asset.path!r} of {tex.GetPath()} not found"
        )
    if resolved not in images:
        data = _asset_bytes(resolved)
        bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) if data else None
        if bgr is None:
            raise ConfigError(f"{WHERE}: {str(stage_path)!r}: texture {resolved!r} cannot be read")
        images[resolved] = np.ascontiguousarray(bgr[:, :, ::-1])
    return images[resolved]


def _asset_bytes(resolved: str) -> bytes | None:
    """An asset's bytes through USD's resolver (a file, or a member of a .usdz package)."""
    from pxr import Ar

    asset = Ar.GetResolver().OpenAsset(Ar.ResolvedPath(resolved))
    if asset is None:
        return None
    buffer = asset.GetBuffer()
    return bytes(buffer) if buffer is not None else None
