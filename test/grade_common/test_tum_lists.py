"""grade_common.tum.list_text: a whole list file that read_list reads back."""

from __future__ import annotations

from pathlib import Path

from grade_common.tum import ImageKind, list_header, list_text, read_list


def test_list_text_reads_back_in_order(tmp_path: Path) -> None:
    stamps = ["0.100000", "0.133333", "0.166667"]
    path = tmp_path / "depth.txt"
    path.write_text(list_text(ImageKind.DEPTH, stamps))
    assert read_list(path) == [(s, f"depth/{s}.png") for s in stamps]
    assert path.read_text().startswith(list_header(ImageKind.DEPTH))


def test_list_text_of_no_frames_is_the_header_alone() -> None:
    assert list_text(ImageKind.RGB, []) == list_header(ImageKind.RGB)
