"""Sphinx extension: the benchmarks page's tables and plots from the committed results files.

`{bench-results} NAME.json` (a MyST directive) shows docs/benchmarks/NAME.json, a
`grade bench ... --json` results file, with its command, machine and date
(`grade_cli.bench_page`); the plots are drawn into docs/benchmarks/generated/ (git-ignored)
before Sphinx reads any page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

RESULTS = "benchmarks"
GENERATED = "generated"


def _results_dir(app: Any) -> Path:
    return Path(app.srcdir) / RESULTS


def _write_plots(app: Any) -> None:
    from grade_cli.bench_page import write_plots

    write_plots(_results_dir(app), _results_dir(app) / GENERATED)


class BenchResultsDirective(SphinxDirective):
    """`{bench-results} FILE`: the tables, notes, plot and provenance of one results file."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from grade_cli.bench_page import plot_name, results_markdown
        from grade_common.bench_results import read_results

        path = _results_dir(self.env.app) / self.arguments[0]
        self.env.note_dependency(str(path))
        results = read_results(path)
        page_dir = Path(self.env.doc2path(self.env.docname)).parent
        plot = ""
        if results.plot:
            image = _results_dir(self.env.app) / GENERATED / plot_name(path)
            plot = Path(image).relative_to(page_dir).as_posix()
        container = nodes.container()
        text = results_markdown(results, plot).splitlines()
        self.state.nested_parse(StringList(text, str(path)), self.content_offset, container)
        return container.children


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write_plots)
    app.add_directive("bench-results", BenchResultsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
