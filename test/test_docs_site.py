"""The documentation site builds with no warning, and no internal link or image is broken."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scripts_kit import load_script

ROOT = Path(__file__).resolve().parent.parent
check_site = load_script("check_site")


def test_the_checker_finds_a_missing_page_anchor_and_image(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(
        '<h1 id="top">x</h1><a href="#top">ok</a><a href="other.html#nowhere">a</a>'
        '<a href="missing.html">b</a><img src="img/gone.png"><a href="https://example.org">c</a>'
    )
    (tmp_path / "other.html").write_text('<p id="here">y</p><a href="index.html#top">back</a>')
    problems = {(b.page, b.reference) for b in check_site.check_site(tmp_path)}
    assert problems == {
        ("index.html", "other.html#nowhere"),
        ("index.html", "missing.html"),
        ("index.html", "img/gone.png"),
    }


@pytest.mark.slow
@pytest.mark.docs
def test_the_site_builds_without_warnings_and_without_broken_links(tmp_path: Path) -> None:
    html = tmp_path / "html"
    build = subprocess.run(
        [
            *(sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"),
            *("-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(html)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-5000:]
    broken = check_site.check_site(html)
    assert not broken, "\n".join(f"{b.page}: {b.reference}: {b.problem}" for b in broken)
    for page in ("reference/generated/scenario.html", "tutorials/person-dataset.html"):
        assert (html / page).is_file(), page
    assert "robots[].cameras[].width" in (html / "reference/generated/scenario.html").read_text()
