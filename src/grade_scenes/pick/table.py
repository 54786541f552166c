"""`grade scenes table`: SceneReplica's tables, one `grade scenes run` per pipeline x ordering.

Each combination runs into its own resumable run folder `OUT/<pipeline>-<ordering>/` (same
seed, same selection), so an interrupted table resumes scene by scene. `OUT/tables.md` is
rewritten after every combination: the summary (pick-and-place and grasp success per
combination), then per combination the per-object breakdown into successes and perception,
planning and execution failures, and the ADD / ADD-S table where there are pose estimates.
"""

from __future__ import annotations

from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.output_guard import write_marker
from grade_eval.pick_place import Attempt, add_s_table, category_table
from grade_scenes.pick.perception import Pipeline
from grade_scenes.pick.protocol import Ordering, PickConfig
from grade_scenes.pick.run import run_selection

TABLE_FILE = "tables.md"


def combination(pipeline: Pipeline, ordering: Ordering) -> str:
    return f"{pipeline.value}-{ordering.value}"


def summary_row(name: str, attempts: tuple[Attempt, ...]) -> str:
    n = len(attempts)
    placed, lifted = sum(a.placed for a in attempts), sum(a.lifted for a in attempts)
    return f"| {name} | {n} | {placed} | {lifted} |"


def tables_markdown(results: dict[str, tuple[Attempt, ...]]) -> str:
    """The summary and the per-combination tables (module doc)."""
    lines = [
        "| pipeline-ordering | attempts | pick and place | grasp success |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [summary_row(name, attempts) for name, attempts in results.items()]
    for name, attempts in results.items():
        lines += ["", f"### {name}", "", category_table(attempts)]
        if any(a.add_s_m is not None for a in attempts):
            lines += ["", add_s_table(attempts)]
    return "\n".join(lines) + "\n"


def run_table(
    selection: Path,
    out: Path,
    seed: int,
    pipelines: list[Pipeline],
    orderings: list[Ordering],
    limit: int | None,
    quiet: bool,
) -> str:
    """Run (or resume) every combination; returns the tables' Markdown (also in OUT/tables.md).

    Raises:
        ScenesError: not a selection folder, or a run folder with other settings.
    """
    out.mkdir(parents=True, exist_ok=True)
    write_marker(out)  # grade's own output: tables.md is replaced in place as runs finish
    results: dict[str, tuple[Attempt, ...]] = {}
    for pipeline in pipelines:
        for ordering in orderings:
            name = combination(pipeline, ordering)
            config = PickConfig(seed=seed, pipeline=pipeline, ordering=ordering)
            results[name] = run_selection(
                selection, out / name, config, sheets=False, quiet=quiet, limit=limit
            )
            text = tables_markdown(results)
            with StagedOutput(out / TABLE_FILE, overwrite=True, announce=False) as tmp:
                tmp.write_text(text)
    return tables_markdown(results)
