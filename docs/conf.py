"""Sphinx configuration of the grade documentation (`make docs`; rosdoc2 reads it too).

Pages are MyST Markdown. The reference pages under reference/generated/ are written from the
code at the start of every build by the local extension _ext/grade_reference.py; the benchmarks
page's tables and plots come from the results files in benchmarks/ (_ext/grade_benchmarks.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
# Without a colcon workspace (rosdoc2, a bare checkout) the packages are imported from src/.
sys.path.append(str(DOCS.parent / "src"))

project = "grade"
author = "grade maintainers"
copyright = "grade maintainers, Apache-2.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "grade_reference",
    "grade_benchmarks",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
# .generated.partial*: a build stopped while writing the generated pages (grade_common.atomic).
exclude_patterns = ["_build", "_ext", "reference/.generated*", "benchmarks/.generated*"]
myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 4


autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "grade"
html_static_path = ["_static"]
html_css_files = ["grade.css"]
