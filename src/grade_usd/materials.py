"""UsdPreviewSurface materials of the exported world, and their texture files.

A material is the simulator's: its colour (the texture's tint) times its texture, matte
(roughness 0.6, as grade render draws it). Textures are PNG files in the stage's textures
folder, written once each (geoms sharing an image share its file and material).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_usd.errors import UsdExportError

ROUGHNESS = 0.6
# Texture coordinates are written as primvars:st, the name UsdPreviewSurface readers expect.
ST = "st"


def srgb_to_linear(c: NDArray[np.float64]) -> NDArray[np.float64]:
    """MuJoCo's colours are sRGB; UsdPreviewSurface's diffuseColor is linear."""
    out: NDArray[np.float64] = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return out


class MaterialLibrary:
    """Materials under `root` (a Scope path); textures in `texture_dir`, named relative to the
    stage as `texture_ref`/<file>."""

    def __init__(self, stage: Any, root: str, texture_dir: Path, texture_ref: str) -> None:
        from pxr import UsdGeom

        self.stage = stage
        self.root = root
        UsdGeom.Scope.Define(stage, root)
        self.texture_dir = texture_dir
        self.texture_ref = texture_ref
        self._files: dict[str, str] = {}
        self._materials: dict[tuple[Any, ...], Any] = {}
        self.bytes_written = 0

    def _texture_file(self, rgb: NDArray[np.uint8]) -> str:
        """The stage-relative path of an image's PNG (written the first time it is seen)."""
        digest = hashlib.sha1(np.ascontiguousarray(rgb).tobytes()).hexdigest()[:16]
        digest += f"_{rgb.shape[1]}x{rgb.shape[0]}"
        if digest not in self._files:
            self.texture_dir.mkdir(parents=True, exist_ok=True)
            path = self.texture_dir / f"tex_{digest}.png"
            # zlib level 1: a third of the default's time, files a few per cent larger.
            params = [cv2.IMWRITE_PNG_COMPRESSION, 1]
            if not cv2.imwrite(str(path), np.ascontiguousarray(rgb[:, :, ::-1]), params):
                raise UsdExportError(f"cannot write texture {path}")
            self.bytes_written += path.stat().st_size
            self._files[digest] = f"{self.texture_ref}/{path.name}"
        return self._files[digest]

    def material(
        self,
        rgba: NDArray[np.float64],
        texture_rgb: NDArray[np.uint8] | None,
        emission_nits: float = 0.0,
    ) -> Any:
        """A UsdShade.Material of colour `rgba` (sRGB) times `texture_rgb` (top row first).

        emission_nits: > 0, the colour is the surface's final look (baked lighting): emitted,
        not lit, a display value of 1 as this luminance (cd/m^2), without specular reflection.
        """
        from pxr import Gf, Sdf, UsdShade

        tex_file = None if texture_rgb is None else self._texture_file(texture_rgb)
        key = (tuple(np.round(rgba, 6)), tex_file, emission_nits)
        if key in self._materials:
            return self._materials[key]
        path = f"{self.root}/mat_{len(self._materials)}"
        mat = UsdShade.Material.Define(self.stage, path)
        shader = UsdShade.Shader.Define(self.stage, f"{path}/surface")
        shader.CreateIdAttr("UsdPreviewSurface")
        linear = srgb_to_linear(np.asarray(rgba[:3], dtype=np.float64))
        color = Gf.Vec3f(*(float(v) for v in linear))
        shader.CreateInput("roughness", Sdf.ValueTypeNames.Float).Set(ROUGHNESS)
        shader.CreateInput("metallic", Sdf.ValueTypeNames.Float).Set(0.0)
        if float(rgba[3]) < 1.0:
            shader.CreateInput("opacity", Sdf.ValueTypeNames.Float).Set(float(rgba[3]))
        diffuse = shader.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f)
        if emission_nits > 0:
            diffuse.Set(Gf.Vec3f(0.0, 0.0, 0.0))
            shader.CreateInput("ior", Sdf.ValueTypeNames.Float).Set(1.0)  # no specular
            diffuse = shader.CreateInput("emissiveColor", Sdf.ValueTypeNames.Color3f)
            color = color * emission_nits
        if tex_file is None:
            diffuse.Set(color)
        else:
            reader = UsdShade.Shader.Define(self.stage, f"{path}/st_reader")
            reader.CreateIdAttr("UsdPrimvarReader_float2")
            reader.CreateInput("varname", Sdf.ValueTypeNames.Token).Set(ST)
            tex = UsdShade.Shader.Define(self.stage, f"{path}/texture")
            tex.CreateIdAttr("UsdUVTexture")
            tex.CreateInput("file", Sdf.ValueTypeNames.Asset).Set(tex_file)
            tex.CreateInput("sourceColorSpace", Sdf.ValueTypeNames.Token).Set("sRGB")
            tex.CreateInput("wrapS", Sdf.ValueTypeNames.Token).Set("repeat")
            tex.CreateInput("wrapT", Sdf.ValueTypeNames.Token).Set("repeat")
            # The material colour tints the texture, as MuJoCo multiplies them.
            tex.CreateInput("scale", Sdf.ValueTypeNames.Float4).Set(Gf.Vec4f(*color, 1.0))
            tex.CreateInput("st", Sdf.ValueTypeNames.Float2).ConnectToSource(
                reader.ConnectableAPI(), "result"
            )
            rgb_out = tex.CreateOutput("rgb", Sdf.ValueTypeNames.Float3)
            diffuse.ConnectToSource(rgb_out)
        mat.CreateSurfaceOutput().ConnectToSource(shader.ConnectableAPI(), "surface")
        self._materials[key] = mat
        return mat
