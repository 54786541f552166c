"""The class table and semantic images (grade_sim.engine.semantic)."""

from __future__ import annotations

import numpy as np

from grade_sim.engine.semantic import BASE_CLASSES, ClassTable, colourise, semantic_image


def test_base_classes_keep_their_ids_and_new_labels_follow_sorted() -> None:
    table = ClassTable.of_labels(["wall", "zebra_rug", "person", "armchair"])
    assert table.names[: len(BASE_CLASSES)] == BASE_CLASSES
    assert table.names[len(BASE_CLASSES) :] == ("armchair", "zebra_rug")
    assert table.class_id("unlabeled") == 0
    assert ClassTable.of_labels(["person"]).class_id("person") == table.class_id("person")


def test_semantic_image_maps_instances_through_the_table() -> None:
    table = ClassTable.of_labels(["floor", "person"])
    lut = table.instance_lut({1: "floor", 2: "person", 5: "floor"})
    instance = np.array([[0, 1, 2], [5, 2, 9]], dtype=np.uint16)  # 9: not in the scene
    semantic = semantic_image(instance, lut)
    floor, person = table.class_id("floor"), table.class_id("person")
    assert semantic.tolist() == [[0, floor, person], [floor, person, 0]]
    preview = colourise(semantic, table)
    assert preview.shape == (2, 3, 3)
    assert preview[0, 0].tolist() == [0, 0, 0]
    assert preview[0, 1].tolist() != preview[0, 2].tolist()


def test_class_table_mapping_has_distinct_colours() -> None:
    mapping = ClassTable.of_labels([]).to_mapping()
    colours = {tuple(v["colour"]) for v in mapping.values()}  # type: ignore[arg-type]
    assert len(colours) == len(mapping)
    assert mapping[0]["name"] == "unlabeled"
