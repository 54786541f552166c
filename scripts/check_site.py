#!/usr/bin/env python3
"""Check a built HTML site: every internal link, anchor and image must exist.

`python scripts/check_site.py docs/_build/html` prints one line per broken reference (the page,
the reference and what is missing) and exits 1 if there is any; `make docs` runs it after the
build. External links (http, https, mailto) are not fetched.
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit


class Broken(NamedTuple):
    """One reference of a page that leads nowhere."""

    page: str  # relative to the site root
    reference: str  # as written in the page
    problem: str


class _Page(HTMLParser):
    """The ids a page defines and the links and images it uses."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v for k, v in attrs if v is not None}
        for key in ("id", "name"):
            if key in values and (key == "id" or tag == "a"):
                self.ids.add(values[key])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if tag == "img" and "src" in values:
            self.images.append(values["src"])
        if tag == "link" and values.get("rel") == "stylesheet" and "href" in values:
            self.links.append(values["href"])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def check_site(root: Path) -> list[Broken]:
    """Every broken internal link, anchor or image of the HTML pages under root."""
    pages = {p: _parse(p) for p in sorted(root.rglob("*.html"))}
    broken: list[Broken] = []
    for path, page in pages.items():
        name = str(path.relative_to(root))
        for reference, is_image in [(r, False) for r in page.links] + [
            (r, True) for r in page.images
        ]:
            parts = urlsplit(reference)
            if parts.scheme or parts.netloc or reference.startswith("data:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                kind = "image" if is_image else "page or file"
                broken.append(Broken(name, reference, f"{kind} {target} does not exist"))
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(
                        Broken(name, reference, f"no id {parts.fragment!r} in {target.name}")
                    )
    return broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="the built site (e.g. docs/_build/html)")
    args = parser.parse_args(argv)
    if not (args.root / "index.html").is_file():
        print(f"check_site: {args.root} has no index.html; build the site first (make docs)")
        return 1
    broken = check_site(args.root)
    for b in broken:
        print(f"{b.page}: {b.reference}: {b.problem}")
    print(f"check_site: {len(broken)} broken reference(s) in {args.root}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
