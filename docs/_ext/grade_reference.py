"""Sphinx extension: writes the reference pages from the code before Sphinx reads any page.

The pages (reference/generated/, git-ignored) come from grade_cli.reference; see that module
for what each one lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _generate(app: Any) -> None:
    from grade_cli.reference import write_reference

    docs = Path(app.srcdir)
    write_reference(docs / "reference" / "generated", docs.parent / "setup.py")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
