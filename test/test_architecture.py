"""The layer rule of docs/architecture.md: no import runs from a lower layer to a higher one.

Imports are read from the source (ast), including those inside functions, and so are module
paths written as strings (`"grade_noise.cli:main"` in a lazy-import table is an import too).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# package -> the grade packages it may import besides itself (docs/architecture.md)
ALLOWED: dict[str, frozenset[str]] = {
    "grade_common": frozenset(),
    "grade_launch": frozenset({"grade_common"}),
    # People (bodies, shapes, motion, retargeting, the crowd): below the simulator, never above it.
    "grade_people": frozenset({"grade_common"}),
    "grade_sim": frozenset({"grade_common", "grade_people"}),
    "grade_control": frozenset({"grade_common"}),
    "grade_noise": frozenset({"grade_common"}),
    "grade_eval": frozenset({"grade_common"}),
    "grade_replay": frozenset({"grade_common", "grade_sim"}),
    # `grade scenes run` scores its pick-and-place attempts with grade_eval.pick_place's tables;
    # the scenarios it writes carry a people section (grade_people.config)
    "grade_scenes": frozenset({"grade_common", "grade_sim", "grade_people", "grade_eval"}),
    # Calls the other tools through the `grade` command, never by import (docs/architecture.md).
    "grade_batch": frozenset({"grade_common"}),
    # the benchmark (grade_slam.bench) simulates and scores; the core and node use grade_common;
    # ORB-SLAM3's inertial settings take the IMU noise presets of grade_noise
    "grade_slam": frozenset({"grade_common", "grade_sim", "grade_eval", "grade_noise"}),
    "grade_render": frozenset({"grade_common", "grade_sim"}),
    # `grade export usd`: poses the recorded world as grade render does (grade_render.world_state)
    # and checks a stage in Blender through grade render's worker environment
    "grade_usd": frozenset({"grade_common", "grade_people", "grade_sim", "grade_render"}),
    "grade_cli": frozenset(
        {
            "grade_common",
            "grade_launch",
            "grade_people",
            "grade_sim",
            "grade_control",
            "grade_noise",
            "grade_eval",
            "grade_replay",
            "grade_scenes",
            "grade_batch",
            "grade_slam",
            "grade_render",
            "grade_usd",
        }
    ),
}

# grade_sim's own layers, low to high; a module may import its own layer and lower ones.
SIM_LAYERS: list[set[str]] = [
    {"config", "errors", "optics", "scenarios"},
    {"world", "robots"},
    {"actors"},
    {"scene"},
    {"engine"},
    {"sensors"},
    {"io"},
    {"sim"},
    {"report"},
    {"node", "bench_looks", "bench_pairs", "cli"},
]
SIM_RANK = {part: rank for rank, parts in enumerate(SIM_LAYERS) for part in parts}
_MODULE_STRING = re.compile(r"^(grade_[a-z]+)(\.[a-z_.]+)?(:[a-z_]+)?$")
PY_FILES = sorted(SRC.rglob("*.py"))


def imported_modules(path: Path) -> list[str]:
    """Every grade module a file imports or names as a module-path string."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            out += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _MODULE_STRING.match(node.value)
            if match and match.group(1) in ALLOWED and (match.group(2) or match.group(3)):
                out.append(node.value.split(":")[0])
    return [m for m in out if m.split(".")[0] in ALLOWED]


def _package_of(path: Path) -> str:
    return path.relative_to(SRC).parts[0]


def test_every_package_has_a_rule() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(ALLOWED), "add the new package to docs/architecture.md and ALLOWED"


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_follow_the_package_layers(path: Path) -> None:
    package = _package_of(path)
    for module in imported_modules(path):
        target = module.split(".")[0]
        assert target == package or target in ALLOWED[package], (
            f"{path.relative_to(SRC)} imports {module}: {package} may import only "
            f"{sorted(ALLOWED[package])} (docs/architecture.md)"
        )


SIM_FILES = [p for p in PY_FILES if _package_of(p) == "grade_sim"]


@pytest.mark.parametrize("path", SIM_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_grade_sim_imports_go_down_its_layers(path: Path) -> None:
    parts = path.relative_to(SRC / "grade_sim").with_suffix("").parts
    if parts[0] == "__init__":
        return
    rank = SIM_RANK[parts[0]]
    for module in imported_modules(path):
        names = module.split(".")
        if names[0] != "grade_sim" or len(names) < 2 or names[1] not in SIM_RANK:
            continue
        assert SIM_RANK[names[1]] <= rank, (
            f"grade_sim/{'/'.join(parts)} ({parts[0]}) imports {module} from the higher layer "
            f"{names[1]}; layers low to high: {SIM_LAYERS} (docs/architecture.md)"
        )


# What grade_people may use besides the standard library and grade: no engine (MuJoCo), no
# collision library, no ROS; the simulator drives the people, never the other way round. numba
# compiles its per-vertex kernels (skin_kernel), as it does grade_sim's.
PEOPLE_THIRD_PARTY = frozenset({"numpy", "scipy", "cv2", "numba"})
PEOPLE_FILES = [p for p in PY_FILES if _package_of(p) == "grade_people"]


def third_party_imports(path: Path) -> set[str]:
    """Top-level names of the non-grade, non-standard-library modules a file imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return {r for r in roots if r not in sys.stdlib_module_names and r not in ALLOWED}


@pytest.mark.parametrize("path", PEOPLE_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_grade_people_never_imports_an_engine(path: Path) -> None:
    extra = third_party_imports(path) - PEOPLE_THIRD_PARTY
    assert not extra, (
        f"{path.relative_to(SRC)} imports {sorted(extra)}: grade_people uses only "
        f"{sorted(PEOPLE_THIRD_PARTY)} (docs/architecture.md)"
    )


def test_the_engine_rule_sees_an_engine_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport numpy as np\ndef f():\n    import mujoco.viewer\n")
    assert third_party_imports(bad) == {"numpy", "mujoco"}


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import os\nfrom grade_sim.scene import Scene\nTABLE = {'x': 'grade_eval.cli:main'}\n"
        "def f():\n    from grade_noise import apply\n"
    )
    found = imported_modules(bad)
    assert "grade_sim.scene" in found
    assert "grade_eval.cli" in found
    assert "grade_noise" in found
    assert all(m.split(".")[0] in ALLOWED for m in found)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_FILES = {_module_name(p): p for p in PY_FILES}


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules among `files` it imports (in functions and TYPE_CHECKING too).

    A package's `__init__` naming its own modules (the lazy table of its public names) is its
    public face, not a dependency: `from grade_common import kitti` in grade_common.rundir and
    grade_common's table naming grade_common.rundir are no circle.
    """
    return {
        name: {
            m
            for m in imported_modules(path)
            if m in files
            and m != name
            and not (path.name == "__init__.py" and m.startswith(f"{name}."))
        }
        for name, path in files.items()
    }


def two_file_circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Pairs of modules that import each other."""
    return {frozenset({a, b}) for a, targets in graph.items() for b in targets if a in graph[b]}


def test_no_two_modules_import_each_other() -> None:
    """A circle means both need something that belongs one level down (or a lazy import hides
    a layering problem); move the shared type or function into a module of its own."""
    circles = two_file_circles(import_graph(MODULE_FILES))
    found = sorted(" <-> ".join(sorted(pair)) for pair in circles)
    assert not found, f"modules that import each other: {found}"


def test_the_circle_check_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from grade_batch.b import B\n"
    )
    (tmp_path / "b.py").write_text("def f():\n    from grade_batch.a import A\n")
    (tmp_path / "c.py").write_text("from grade_batch.a import A\n")
    files = {f"grade_batch.{n}": tmp_path / f"{n}.py" for n in "abc"}
    assert two_file_circles(import_graph(files)) == {frozenset({"grade_batch.a", "grade_batch.b"})}


# Inside every package, three layers per capability (docs/architecture.md): the core, the rclpy
# node (a `node/` folder or a `*_node.py` file) and the tool/CLI (a `cli/` folder, `cli.py`,
# `*_cli.py`, or the grade_cli package). A layer imports only its own and lower ones.
def is_node_module(name: str) -> bool:
    """A module of the node layer: inside a `node/` folder, or named `*_node`."""
    parts = name.split(".")
    return "node" in parts[1:-1] or parts[-1] == "node" or parts[-1].endswith("_node")


def is_cli_module(name: str) -> bool:
    """A module of the CLI layer: a package's `cli` modules (and the `grade` command's own)."""
    parts = name.split(".")
    return parts[0] == "grade_cli" or any(p == "cli" or p.endswith("_cli") for p in parts[1:])


def layer_violations(files: dict[str, Path]) -> list[str]:
    """Imports of node modules from core modules, and of cli modules from non-cli modules."""
    found = []
    for name, targets in sorted(import_graph(files).items()):
        for target in sorted(targets):
            if is_cli_module(target) and not is_cli_module(name):
                found.append(f"{name} imports the cli module {target}")
            elif is_node_module(target) and not (is_node_module(name) or is_cli_module(name)):
                found.append(f"{name} imports the node module {target}")
    return found


def test_core_never_imports_node_or_cli_modules() -> None:
    """A core module runs without ROS and without a command line: it never imports a node
    module; only cli modules import cli modules (the CLI sits above the node it may start)."""
    assert not layer_violations(MODULE_FILES), layer_violations(MODULE_FILES)


def test_the_layer_rule_sees_node_and_cli_imports(tmp_path: Path) -> None:
    (tmp_path / "core.py").write_text(
        "def f():\n    from grade_sim.node.sim_node import QOS\nRUN = 'grade_sim.cli.run:main'\n"
    )
    (tmp_path / "tool.py").write_text("from grade_sim.node.sim_node import QOS\n")
    (tmp_path / "n.py").write_text("from grade_sim.cli.run import main\n")
    files = {
        "grade_sim.core": tmp_path / "core.py",
        "grade_sim.cli.tool": tmp_path / "tool.py",
        "grade_sim.node.sim_node": tmp_path / "n.py",
        "grade_sim.cli.run": tmp_path / "tool.py",
    }
    assert layer_violations(files) == [
        "grade_sim.core imports the cli module grade_sim.cli.run",
        "grade_sim.core imports the node module grade_sim.node.sim_node",
        "grade_sim.node.sim_node imports the cli module grade_sim.cli.run",
    ]
