"""grade_common.config_keys: every leaf key of a config tree, with defaults, ranges and meaning."""

from __future__ import annotations

from dataclasses import dataclass, field

from grade_common.config_keys import config_keys, first_sentence, format_keys
from grade_common.schema import bounds


@dataclass(frozen=True)
class _Mount:
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class _Camera:
    # Pixels across (the image's width).
    width: int = field(default=640, metadata=bounds(16, 4096))
    mount: _Mount = field(default_factory=lambda: _Mount(xyz=(0.1, 0.0, 0.0)))
    rate_hz: float = field(default=30.0, metadata=bounds(0.0, 240.0, exclusive_min=True))


@dataclass(frozen=True)
class _Robot:
    name: str = "robot"  # the namespace; a ROS name
    cameras: tuple[_Camera, ...] = ()
    note: str | None = field(default=None, metadata={"doc": "a free text"})


def test_list_items_are_written_with_brackets_and_set_with_an_index() -> None:
    keys = {k.path: k for k in config_keys(_Robot)}
    assert list(keys) == [
        "name",
        "cameras[].width",
        "cameras[].mount.xyz",
        "cameras[].rate_hz",
        "note",
    ]
    assert keys["cameras[].width"].set_path() == "cameras.0.width"


def test_type_default_range_and_meaning_come_from_the_field() -> None:
    keys = {k.path: k for k in config_keys(_Robot)}
    width = keys["cameras[].width"]
    assert (width.type, width.default, width.allowed) == ("integer", "640", "[16, 4096]")
    assert width.meaning == "Pixels across (the image's width)"
    assert keys["cameras[].rate_hz"].allowed == "(0, 240]"
    assert keys["name"].meaning == "the namespace"
    assert keys["note"].meaning == "a free text"
    assert keys["note"].type == "string or null"


def test_a_section_default_comes_from_its_parent_field() -> None:
    # A camera written without a mount gets the camera's default mount, not _Mount()'s.
    keys = {k.path: k for k in config_keys(_Robot)}
    assert keys["cameras[].mount.xyz"].default == "[0.1, 0, 0]"


def test_the_first_sentence_ignores_stops_inside_brackets() -> None:
    assert first_sentence("Soft shadows (engine/x.py; 2 ms). More text.") == (
        "Soft shadows (engine/x.py; 2 ms)"
    )
    assert first_sentence("a; b") == "a"


def test_terminal_text_names_every_key() -> None:
    text = format_keys(config_keys(_Robot))
    assert "cameras[].width\n    integer, default 640\n    allowed: [16, 4096]" in text
