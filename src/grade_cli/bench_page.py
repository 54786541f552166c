"""The benchmarks page's tables and plots, written from the committed results files.

docs/benchmarks/*.json are `grade bench NAME --json OUT` results files
(`grade_common.bench_results`); the page's `{bench-results} FILE` directive
(docs/_ext/grade_benchmarks.py) shows each as Markdown from `results_markdown`, and a file with
a `plot` entry gets a bar chart from `write_plot`, so no number on the page is typed by hand.
"""

from __future__ import annotations

from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.bench_results import BenchResults, Cell, read_results


def _decimals(value: Cell) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if isinstance(value, float) and "." in text else 0


def _cell(value: Cell, decimals: int = 0) -> str:
    """A cell's text; a float with as many decimals as its column's most precise value, so that
    0.020 next to 0.019 keeps its trailing zero."""
    text = f"{value:.{decimals}f}" if isinstance(value, float) else str(value)
    return text.replace("|", "\\|")


def _numeric(values: list[Cell]) -> bool:
    return all(isinstance(v, int | float) for v in values)


def table_markdown(columns: tuple[str, ...], rows: tuple[tuple[Cell, ...], ...]) -> list[str]:
    """A Markdown table; numeric columns right-aligned."""
    numeric = [bool(rows) and _numeric([r[i] for r in rows]) for i in range(len(columns))]
    decimals = [max((_decimals(r[i]) for r in rows), default=0) for i in range(len(columns))]
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "|" + "".join(" ---: |" if n else " --- |" for n in numeric),
    ]
    lines += [
        "| " + " | ".join(_cell(c, d) for c, d in zip(row, decimals, strict=True)) + " |"
        for row in rows
    ]
    return lines


def provenance_markdown(results: BenchResults) -> list[str]:
    """Command, machine and date of a results file, as the lines under its tables."""
    if "\n" in results.command:
        command = ["Commands:", "", "```bash", results.command, "```", ""]
    else:
        command = [f"Command: `{results.command}`  "]
    return [*command, f"Machine: {results.machine}  ", f"Date: {results.date}"]


def results_markdown(results: BenchResults, plot: str = "") -> str:
    """The Markdown of one results file: each table under its title, the notes, the plot
    (`plot`: its image path relative to the page) and where the numbers come from."""
    lines: list[str] = []
    for table in results.tables:
        if table.title:
            lines += [f"**{table.title}**", ""]
        lines += [*table_markdown(table.columns, table.rows), ""]
    if results.notes:
        lines += [results.notes, ""]
    if plot:
        caption = results.plot.get("caption", results.tables[results.plot.get("table", 0)].title)
        lines += [f"![{caption}]({plot})", ""]
    lines += provenance_markdown(results)
    return "\n".join(lines) + "\n"


def write_plot(results: BenchResults, out: Path) -> Path:
    """A bar chart of `results.plot` (keys: table, x, y, ylabel): one group of bars per row,
    one bar per y column; written to out (a PNG, replaced at every docs build)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spec = results.plot
    table = results.tables[int(spec.get("table", 0))]
    x_index = table.columns.index(str(spec["x"]))
    y_columns = [str(c) for c in spec["y"]]
    labels = [str(row[x_index]) for row in table.rows]
    width = 0.8 / len(y_columns)
    fig, ax = plt.subplots(figsize=(7.0, 3.2), dpi=110)
    for k, column in enumerate(y_columns):
        j = table.columns.index(column)
        values = [float(row[j]) for row in table.rows]
        ax.bar(
            [i + (k - (len(y_columns) - 1) / 2) * width for i in range(len(labels))],
            values,
            width,
            label=column,
        )
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.set_ylabel(str(spec.get("ylabel", "")))
    if len(y_columns) > 1:
        ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def plot_name(results_file: Path) -> str:
    """The file name of a results file's plot in the generated folder."""
    return results_file.stem + ".png"


def write_plots(results_dir: Path, out_dir: Path) -> list[Path]:
    """The plot of every results file in results_dir that asks for one, into out_dir (the
    folder a former build wrote is replaced once the new one is complete)."""
    written = []
    with StagedOutput(out_dir, overwrite=True, announce=False) as staged:
        staged.mkdir(parents=True)
        for path in sorted(results_dir.glob("*.json")):
            results = read_results(path)
            if results.plot:
                write_plot(results, staged / plot_name(path))
                written.append(out_dir / plot_name(path))
    return written
