"""`grade bench slam --grade-table OUT --merge FOLDER...`: one table from the stored results of
several `--grade-table` folders (the jobs of a `grade batch` slam_table sweep, one sequence
each).

Every sequence a folder holds must be one the preset makes (its recorded scenario equal to the
one `grade_sequences.sequence_scenario` makes now: another preset or duration is refused), and
must have every backend x repeat asked for. The sequences found must make a whole table (worlds
x kinds x seeds of the preset). Their records and results are copied into OUT (a file OUT holds
already must be the same bytes), and the table is then built by `grade_table.run_table`, which
finds everything stored: OUT is the folder one `--grade-table` run of those sequences writes,
without its runs and masks.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from grade_common.atomic import write_bytes
from grade_common.output_guard import OUTPUT_MARKER
from grade_slam.errors import SlamError
from grade_slam.grade_sequences import GradePreset, sequence_name, sequence_scenario, sequences
from grade_slam.grade_table_files import (
    RECORDS_DIR,
    RESULTS_DIR,
    SCENARIO_SUFFIX,
    result_stem,
    scenario_text,
)

Sequence = tuple[str, str, int]


def _copy(source: Path, target: Path) -> None:
    """Copy a stored file into OUT, or accept the same bytes there; never replace another."""
    data = source.read_bytes()
    if target.is_file():
        if target.read_bytes() != data:
            raise SlamError(f"{target}: holds another result than {source}; merge into a new OUT")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(target, data)


def _stored_files(name: str, backends: tuple[str, ...], repeats: int) -> list[str]:
    """What a complete sequence of the table leaves under OUT, relative to it."""
    files = [f"{RECORDS_DIR}/{name}{SCENARIO_SUFFIX}", f"{RECORDS_DIR}/{name}.json"]
    for backend in backends:
        for repeat in range(repeats):
            stem = f"{RESULTS_DIR}/{result_stem(name, backend, repeat)}"
            files += [f"{stem}.json", f"{stem}.txt"]
    return files


def find_sequences(
    preset: GradePreset, base: dict[str, Any], folders: list[Path]
) -> dict[Sequence, Path]:
    """Each sequence the folders hold and its folder, checked against the preset.

    Raises:
        SlamError: a folder is not a `--grade-table` output, holds a sequence the preset does
            not make (or makes from another scenario), or two folders hold the same sequence.
    """
    by_name = {sequence_name(*seq): seq for seq in sequences(preset)}
    found: dict[Sequence, Path] = {}
    for folder in folders:
        if not (folder / OUTPUT_MARKER).is_file():
            raise SlamError(f"{folder}: not the OUT of a --grade-table run (no {OUTPUT_MARKER})")
        for path in sorted((folder / RECORDS_DIR).glob(f"*{SCENARIO_SUFFIX}")):
            name = path.name.removesuffix(SCENARIO_SUFFIX)
            seq = by_name.get(name)
            if seq is None:
                raise SlamError(
                    f"{path}: {name} is not a sequence of the preset (worlds "
                    f"{preset.world_names}, kinds {list(preset.kinds)}, seeds {list(preset.seeds)})"
                )
            if path.read_text() != scenario_text(sequence_scenario(preset, base, *seq)):
                raise SlamError(
                    f"{path}: {name} was made from another scenario than the preset makes (another "
                    "preset, base scenario or --duration-s); merge the folders of one preset only"
                )
            if seq in found:
                raise SlamError(f"{name}: in both {found[seq]} and {folder}; give each once")
            found[seq] = folder
    if not found:
        raise SlamError(f"no table sequences in {[str(f) for f in folders]}")
    return found


def whole_table(preset: GradePreset, found: dict[Sequence, Path]) -> GradePreset:
    """The preset cut to the worlds, kinds and seeds found, in the preset's order.

    Raises:
        SlamError: the sequences found are not every worlds x kinds x seeds combination.
    """
    worlds = tuple(w for w in preset.worlds if any(s[0] == w.name for s in found))
    kinds = tuple(k for k in preset.kinds if any(s[1] == k for s in found))
    seeds = tuple(n for n in preset.seeds if any(s[2] == n for s in found))
    table = replace(preset, worlds=worlds, kinds=kinds, seeds=seeds)
    missing = [sequence_name(*s) for s in sequences(table) if s not in found]
    if missing:
        raise SlamError(
            f"the folders hold {len(found)} sequences, not a whole table of worlds "
            f"{[w.name for w in worlds]} x kinds {list(kinds)} x seeds {list(seeds)}; "
            f"missing {missing}"
        )
    return table


def merge_folders(
    preset: GradePreset, out: Path, backends: tuple[str, ...], repeats: int, folders: list[Path]
) -> GradePreset:
    """Copy the folders' stored sequences and results (every backend x repeat) into `out`; the
    preset cut to the table they make (give it to `grade_table.run_table` and `write_report`).

    Raises:
        SlamError: see `find_sequences` and `whole_table`; a sequence lacks a result of the
            backends x repeats asked for; OUT holds another result of the same name.
    """
    base = yaml.safe_load(Path(preset.scenario).read_text())
    found = find_sequences(preset, base, folders)
    table = whole_table(preset, found)
    for seq, folder in found.items():
        for relative in _stored_files(sequence_name(*seq), backends, repeats):
            source = folder / relative
            if not source.is_file():
                raise SlamError(
                    f"{source}: missing; was {folder} run with --backends {list(backends)} and "
                    f"--repeats {repeats} to the end?"
                )
            _copy(source, out / relative)
    return table
