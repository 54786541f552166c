"""The sweep file of `grade batch`: groups of jobs, the per-job pipeline, splits, resources.

A sweep (YAML, see config/batch_grade_small.yaml) is validated once by grade_common.schema into
the frozen `Sweep`; errors name the key path, the value and what is allowed. Override values
are read like `grade run --set` reads them: a string is parsed as YAML ("[0.2, 0.4]" becomes a
list), other scalars are taken as they are.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from grade_batch.errors import BatchConfigError
from grade_common.names import ros_name
from grade_common.schema import (
    KEY_PATH,
    Checked,
    bounds,
    from_mapping,
    named_items,
    text,
    to_mapping,
)

WORDING = replace(KEY_PATH, error=BatchConfigError, root="sweep")
# A dotted scenario key: `people.count`, `robots.0.cameras.0.width` (list items by index).
KEY_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*"
# GRADE's 8 sequence kinds (grade_slam.grade_sequences.KINDS, which grade_batch may not import;
# test_batch_spec checks that the two agree) and a preset world's name.
TABLE_KIND_PATTERN = r"(static|people_[NFL])(_H)?"
TABLE_WORLD_PATTERN = r"[a-z][a-z0-9_]*"
Scalar = int | float | bool | str


@dataclass(frozen=True)
class Setting(Checked):
    """One scenario override: a dotted key and its value."""

    WORDING = WORDING
    key: str = field(metadata=text(KEY_PATTERN))
    value: Scalar


@dataclass(frozen=True)
class Axis(Checked):
    """A swept scenario key and its values (one job per value, combined by product or zip)."""

    WORDING = WORDING
    key: str = field(metadata=text(KEY_PATTERN))
    values: tuple[Scalar, ...]

    def validate(self, path: str) -> None:
        if not self.values:
            raise BatchConfigError(f"axis {self.key}: needs at least one value")


@dataclass(frozen=True)
class Group(Checked):
    """Jobs of one scenario: every seed x every product combination x every zip position.

    In a sweep with `pipeline.slam_table`, a group is one world and kind of GRADE's table
    instead (one job per seed), and has no scenario or overrides.

    Attributes:
        name: the group's name (folder and sequence prefix).
        seeds: the scenario seeds (one job each per combination).
        scenario: scenario file, relative to the sweep file (not in a slam_table sweep).
        world: a world of the table's preset (slam_table sweeps only).
        kind: one of GRADE's kinds (slam_table sweeps only).
        set: overrides applied to every job of the group.
        product: axes combined as a cartesian product.
        zip: axes of equal length, walked together.
    """

    WORDING = WORDING
    name: str = field(metadata=ros_name())
    seeds: tuple[int, ...] = field(metadata=bounds(0, 2**31 - 1))
    scenario: str = field(default="", metadata=text(allow_empty=True))
    world: str = field(default="", metadata=text(TABLE_WORLD_PATTERN, allow_empty=True))
    kind: str = field(default="", metadata=text(TABLE_KIND_PATTERN, allow_empty=True))
    set: tuple[Setting, ...] = ()
    product: tuple[Axis, ...] = field(default=(), metadata=named_items("key"))
    zip: tuple[Axis, ...] = field(default=(), metadata=named_items("key"))

    def validate(self, path: str) -> None:
        where = f"groups.{self.name}"  # Checked validates without the path: name it here
        if not self.seeds:
            raise BatchConfigError(f"{where}.seeds: needs at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise BatchConfigError(f"{where}.seeds: {list(self.seeds)} has duplicates")
        lengths = {len(a.values) for a in self.zip}
        if len(lengths) > 1:
            raise BatchConfigError(
                f"{where}.zip: axes must have the same number of values, got "
                f"{ {a.key: len(a.values) for a in self.zip} }"
            )


@dataclass(frozen=True)
class NoiseStep(Checked):
    """`grade noise apply RUN/bag NOISY_BAG --params PARAMS --seed SEED` for every job."""

    WORDING = WORDING
    params: str  # noise_node parameters file, relative to the sweep file
    seed_offset: int = field(default=0, metadata=bounds(0, 2**30))  # noise seed = job seed + it


@dataclass(frozen=True)
class ReplayVariant(Checked):
    """`grade replay RUN --out replay_<name>` with changed surroundings."""

    WORDING = WORDING
    name: str = field(metadata=ros_name())
    light_scale: float = field(default=1.0, metadata=bounds(0.0, 100.0))
    hide: tuple[str, ...] = field(default=(), metadata=text(r"[A-Za-z0-9_*?]+"))


@dataclass(frozen=True)
class Category(Checked):
    """A COCO category / YOLO class: instance classes (shell patterns) mapped onto one name."""

    WORDING = WORDING
    name: str = field(metadata=ros_name())
    match: tuple[str, ...] = field(metadata=text(r"[A-Za-z0-9_*?\[\]]+"))


def _default_categories() -> tuple[Category, ...]:
    return (Category("person", ("person",)), Category("flying_object", ("flying_*",)))


class YoloTask(enum.Enum):
    """What a YOLO label line holds: a box, or the instance's outline polygon."""

    DETECT = "detect"
    SEGMENT = "segment"


@dataclass(frozen=True)
class ExportSettings(Checked):
    """Per-frame labels of every camera of a job's run (COCO and YOLO), with GRADE-like filters.

    Attributes:
        categories: the class table (order = COCO id - 1 = YOLO class index).
        min_visible_px: drop instances with fewer visible mask pixels.
        max_occlusion: drop instances whose occlusion proxy is above it (1 = keep all): 1 minus
            the area of the tight box (visible pixels) over the area of the loose box (the
            projected 3D box, occluded parts too).
        frame_stride: export every n-th frame.
        yolo_task: detect (boxes) or segment (polygons).
    """

    WORDING = WORDING
    coco: bool = True
    yolo: bool = True
    categories: tuple[Category, ...] = field(
        default_factory=_default_categories, metadata=named_items("name")
    )
    min_visible_px: int = field(default=0, metadata=bounds(0, 10**8))
    max_occlusion: float = field(default=1.0, metadata=bounds(0.0, 1.0))
    frame_stride: int = field(default=1, metadata=bounds(1, 10**6))
    yolo_task: YoloTask = YoloTask.DETECT

    def validate(self, path: str) -> None:
        names = [c.name for c in self.categories]
        if not names or len(set(names)) != len(names):
            raise BatchConfigError(
                f"pipeline.export.categories: names {names} must be unique and non-empty"
            )


@dataclass(frozen=True)
class EvalSettings(Checked):
    """Dataset-wide `grade eval batch` of the noisy odometry against the ground truth."""

    WORDING = WORDING
    estimate_topic: str = field(default="/uav1/odom_noisy", metadata=text(r"/[A-Za-z0-9_/]+"))
    robot: str = field(default="uav1", metadata=ros_name())
    # Odometry starts at the true pose, so `origin` alignment measures its drift (and stays
    # defined for short, nearly straight sequences where an SE(3) fit is degenerate).
    align: str = field(default="origin", metadata=text("none|origin|se3|sim3"))


@dataclass(frozen=True)
class SlamTableStep(Checked):
    """GRADE's dynamic-SLAM table, one sequence per job: `grade bench slam --grade-table
    slam_table --preset PRESET --worlds W --kinds K --table-seeds SEED ...`, with the world and
    kind of the job's group; the batch then merges the jobs' tables into DIR/table.

    Attributes:
        preset: the table's preset file, relative to the sweep file.
        backends: the table's backends (empty: every backend of the table).
        repeats: scored runs of each backend on each sequence.
        duration_s: the sequences' length (None: the preset's).
    """

    WORDING = WORDING
    preset: str
    backends: tuple[str, ...] = field(default=(), metadata=text(r"[a-z][a-z0-9_]*"))
    repeats: int = field(default=1, metadata=bounds(1, 100))
    duration_s: float | None = field(default=None, metadata=bounds(1.0, 3600.0))

    def arguments(self, preset: str) -> list[str]:
        """The `grade bench slam --grade-table` options every job and the merge share."""
        args = ["--preset", preset, "--repeats", str(self.repeats)]
        if self.backends:
            args += ["--backends", *self.backends]
        if self.duration_s is not None:
            args += ["--duration-s", repr(self.duration_s)]
        return args


@dataclass(frozen=True)
class Pipeline(Checked):
    """The steps of every job after `grade run` (each optional), or GRADE's SLAM table, which
    simulates its sequence itself (`slam_table`, alone)."""

    WORDING = WORDING
    noise: NoiseStep | None = None
    replays: tuple[ReplayVariant, ...] = field(default=(), metadata=named_items("name"))
    export: ExportSettings | None = field(default_factory=ExportSettings)
    eval: EvalSettings | None = None
    slam_table: SlamTableStep | None = None

    def validate(self, path: str) -> None:
        names = [r.name for r in self.replays]
        if len(set(names)) != len(names):
            raise BatchConfigError(f"pipeline.replays: duplicate names {names}")
        if self.eval is not None and self.noise is None:
            raise BatchConfigError("pipeline.eval: needs pipeline.noise (it scores noisy odometry)")
        if self.slam_table is not None:
            steps = {
                "noise": self.noise is not None,
                "replays": bool(self.replays),
                "export": self.export is not None,
                "eval": self.eval is not None,
            }
            for step, present in steps.items():
                if present:
                    raise BatchConfigError(
                        f"pipeline.{step}: not allowed with pipeline.slam_table (its jobs run no "
                        f"`grade run`); remove it{' or set it to null' if step == 'export' else ''}"
                    )


@dataclass(frozen=True)
class Splits(Checked):
    """Fractions of sequences (jobs) in train/val/test; whole sequences, never frames."""

    WORDING = WORDING
    train: float = field(default=0.7, metadata=bounds(0.0, 1.0))
    val: float = field(default=0.15, metadata=bounds(0.0, 1.0))
    test: float = field(default=0.15, metadata=bounds(0.0, 1.0))
    seed: int = field(default=0, metadata=bounds(0, 2**31 - 1))

    def validate(self, path: str) -> None:
        total = self.train + self.val + self.test
        if abs(total - 1.0) > 1e-9:
            raise BatchConfigError(f"splits: train + val + test = {total:g}; must be 1")


@dataclass(frozen=True)
class Resources(Checked):
    """What one job needs (Ray schedules by it; the local pool runs `workers` jobs at once)."""

    WORDING = WORDING
    num_cpus: float = field(default=1.0, metadata=bounds(0.0, 1024.0, exclusive_min=True))
    num_gpus: float = field(default=0.0, metadata=bounds(0.0, 64.0))
    memory_mb: int = field(default=0, metadata=bounds(0, 10**7))  # 0 = not declared


@dataclass(frozen=True)
class Sweep(Checked):
    """A validated sweep file."""

    WORDING = WORDING
    name: str = field(metadata=ros_name())
    groups: tuple[Group, ...] = field(metadata=named_items("name"))
    description: str = field(default="", metadata=text(allow_empty=True))
    pipeline: Pipeline = field(default_factory=Pipeline)
    splits: Splits = field(default_factory=Splits)
    resources: Resources = field(default_factory=Resources)
    # ROS_DOMAIN_ID of job i is first + i % (last - first + 1): concurrent jobs never share one.
    domain_ids: tuple[int, int] = field(default=(1, 100), metadata=bounds(0, 232))
    licence: str = field(default="CC-BY-4.0", metadata=text(r"[A-Za-z0-9.+-]+"))

    def validate(self, path: str) -> None:
        names = [g.name for g in self.groups]
        if not names:
            raise BatchConfigError("groups: at least one group is required")
        if len(set(names)) != len(names):
            raise BatchConfigError(f"groups: duplicate names {names}")
        if self.domain_ids[0] > self.domain_ids[1]:
            raise BatchConfigError(f"domain_ids: {list(self.domain_ids)} must be [first, last]")
        for group in self.groups:
            _check_group_kind(group, table=self.pipeline.slam_table is not None)


def _check_group_kind(group: Group, *, table: bool) -> None:
    """A scenario group names a scenario and no table sequence; a slam_table group the
    opposite (its job simulates the preset's sequence itself)."""
    where = f"groups.{group.name}"
    if table:
        for key in ("world", "kind"):
            if not getattr(group, key):
                raise BatchConfigError(f"{where}.{key}: required with pipeline.slam_table")
        for key in ("scenario", "set", "product", "zip"):
            if getattr(group, key):
                raise BatchConfigError(
                    f"{where}.{key}: not allowed with pipeline.slam_table (the preset makes "
                    "the scenario); remove it"
                )
        return
    if not group.scenario:
        raise BatchConfigError(f"{where}.scenario: required (a scenario file)")
    for key in ("world", "kind"):
        if getattr(group, key):
            raise BatchConfigError(f"{where}.{key}: only with pipeline.slam_table; remove it")


@dataclass(frozen=True)
class SweepFile:
    """A sweep and the folder its relative paths start from."""

    sweep: Sweep
    base_dir: Path

    def path_of(self, relative: str) -> Path:
        """A path of the sweep file (scenario, noise parameters), made absolute."""
        p = Path(relative)
        return p if p.is_absolute() else (self.base_dir / p).resolve()

    def digest(self) -> str:
        """sha256 of the validated sweep (a resumed batch must use the same one)."""
        data = json.dumps(to_mapping(self.sweep), sort_keys=True).encode()
        return hashlib.sha256(data).hexdigest()


def parse_value(value: Scalar) -> Any:
    """An override value as `grade run --set` reads it: strings are YAML, the rest as given."""
    return yaml.safe_load(value) if isinstance(value, str) else value


def load_sweep(path: str | Path) -> SweepFile:
    """Read and validate a sweep file; its scenario and parameter files must exist.

    Raises:
        BatchConfigError: unreadable, not YAML, a bad value (key path named), a missing file.
    """
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text())
    except OSError as err:
        raise BatchConfigError(f"sweep file {str(file)!r} is unreadable: {err}") from err
    except yaml.YAMLError as err:
        raise BatchConfigError(f"{file}: not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise BatchConfigError(f"{file}: expected a mapping at the top level")
    try:
        sweep = _from_mapping(data)
    except BatchConfigError as err:
        raise BatchConfigError(f"{file}: {err}") from err
    spec = SweepFile(sweep, file.resolve().parent)
    needed = [(f"groups.{g.name}.scenario", g.scenario) for g in sweep.groups if g.scenario]
    if sweep.pipeline.noise is not None:
        needed.append(("pipeline.noise.params", sweep.pipeline.noise.params))
    if sweep.pipeline.slam_table is not None:
        needed.append(("pipeline.slam_table.preset", sweep.pipeline.slam_table.preset))
    for key, rel in needed:
        if not spec.path_of(rel).is_file():
            raise BatchConfigError(f"{file}: {key}: file {str(spec.path_of(rel))!r} does not exist")
    return spec


def _from_mapping(data: dict[str, Any]) -> Sweep:
    """Validate the sweep; a group's `set`, `product` and `zip` may be written as mappings
    (`set: {people.count: 0}`, `product: {lights.count: [1, 3]}`): they become the item lists
    the schema checks, in file order."""
    groups = data.get("groups")
    if isinstance(groups, list):
        data = {**data, "groups": [_lists_of(g) if isinstance(g, dict) else g for g in groups]}
    return from_mapping(Sweep, data, "", WORDING)


def _lists_of(group: dict[str, Any]) -> dict[str, Any]:
    out = dict(group)
    if isinstance(out.get("set"), dict):
        out["set"] = [{"key": k, "value": v} for k, v in out["set"].items()]
    for name in ("product", "zip"):
        if isinstance(out.get(name), dict):
            out[name] = [{"key": k, "values": v} for k, v in out[name].items()]
    return out
