"""Object sets: validation, mass and inertia from density, and the packaged meshes."""

from __future__ import annotations

import numpy as np
import pytest

from grade_scenes.errors import ObjectSetError
from grade_scenes.objects import (
    ObjectSpec,
    Shape,
    default_object_set,
    load_object_set,
    physical_object,
)


def test_box_mass_and_inertia_match_the_formulas() -> None:
    spec = ObjectSpec(name="box", shape=Shape.BOX, size_m=(0.1, 0.2, 0.3), density_kg_m3=1000.0)
    obj = physical_object(spec)
    mass = 1000.0 * 0.1 * 0.2 * 0.3
    assert obj.mass_kg == pytest.approx(mass)
    expected = mass / 12 * np.diag([0.2**2 + 0.3**2, 0.1**2 + 0.3**2, 0.1**2 + 0.2**2])
    np.testing.assert_allclose(obj.inertia_kg_m2, expected, atol=1e-9)
    np.testing.assert_allclose(obj.mesh.bounds, [[-0.05, -0.1, -0.15], [0.05, 0.1, 0.15]])


def test_mesh_is_moved_to_its_centre_of_mass(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import trimesh

    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).apply_translation((1, 2, 3)).export(
        tmp_path / "off.stl"
    )
    (tmp_path / "set.yaml").write_text(
        "objects:\n  - {name: cube, mesh: off.stl, scale: [2, 1, 1], density_kg_m3: 100}\n"
    )
    config, base = load_object_set(tmp_path / "set.yaml")
    obj = physical_object(config.objects[0], base)
    np.testing.assert_allclose(obj.mesh.center_mass, 0.0, atol=1e-9)
    assert obj.mass_kg == pytest.approx(100 * 0.2 * 0.1 * 0.1, rel=1e-5)  # STL: float32


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "a", "shape": "box", "size_m": [0.1, 0.1]}, r"objects\.a.*size_m.*expected 3"),
        ({"name": "a"}, r"mesh file is required"),
        ({"name": "a", "shape": "sphere"}, r"objects\.a\.shape.*'sphere'"),
        ({"name": "a b", "shape": "box", "size_m": [0.1, 0.1, 0.1]}, r"name.*'a b'"),
        (
            {"name": "a", "shape": "box", "size_m": [0.1, 0.1, 0.1], "density_kg_m3": 0},
            r"objects\.a\.density_kg_m3.*out of range",
        ),
    ],
)
def test_bad_entries_are_named(tmp_path, entry, message) -> None:  # type: ignore[no-untyped-def]
    import yaml

    (tmp_path / "set.yaml").write_text(yaml.safe_dump({"objects": [entry]}))
    with pytest.raises(ObjectSetError, match=message):
        load_object_set(tmp_path / "set.yaml")


def test_missing_mesh_file_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "set.yaml").write_text("objects:\n  - {name: mug, mesh: nowhere/mug.obj}\n")
    config, base = load_object_set(tmp_path / "set.yaml")
    with pytest.raises(ObjectSetError, match=r"objects\.mug\.mesh.*mug\.obj.*does not exist"):
        physical_object(config.objects[0], base)


def test_default_set_has_16_objects_with_real_meshes() -> None:
    config = default_object_set()
    assert len(config.objects) == 16
    meshes = [o for o in config.objects if o.shape is Shape.MESH]
    assert len(meshes) == 6
    for spec in meshes:
        obj = physical_object(spec)
        # Household objects: a few centimetres to 20 cm, tens of grams to a kilogram.
        assert 0.02 < float(obj.mesh.extents.max()) < 0.25, spec.name
        assert 0.005 < obj.mass_kg < 1.5, spec.name
        assert len(obj.mesh.faces) > 50, spec.name
