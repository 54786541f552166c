"""Shared pieces of the bad-input fuzz suites: file mutations and the "refused cleanly" check.

A suite takes a valid input file, mutates its bytes (truncation at a random offset, flipped
bytes, non-UTF-8 bytes, a value replaced by a huge, non-finite or wrongly typed one) and checks
that the entry point either accepts it or raises a GradeError whose message names the file, and
that nothing was written. Hypothesis profiles live in test/conftest.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from grade_common.errors import GradeError

# YAML/text tokens that break a value: non-finite, huge, wrong type, a path where a name goes.
WEIRD_TOKENS = [
    b".nan",
    b"-.inf",
    b"1e999",
    b"1e308",
    b"-1e308",
    b"123456789012345678901234567890",
    b"-1",
    b"0",
    b"null",
    b"[]",
    b"{}",
    b"'../../../x'",
    b"'a b'",
    b"\xff\xfe",
    b"\x00",
    b"caf\xc3\xa9",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
]
_TOKEN = re.compile(rb"[A-Za-z0-9_.+-]+")


def mutated(base: bytes) -> st.SearchStrategy[bytes]:
    """Variants of `base`: truncated, one byte flipped, bytes inserted, one token replaced."""
    n = len(base)
    truncated = st.integers(0, n).map(lambda cut: base[:cut])
    flipped = st.tuples(st.integers(0, max(n - 1, 0)), st.integers(1, 255)).map(
        lambda iv: base[: iv[0]] + bytes([base[iv[0]] ^ iv[1]]) + base[iv[0] + 1 :] if n else base
    )
    inserted = st.tuples(st.integers(0, n), st.binary(min_size=1, max_size=8)).map(
        lambda ib: base[: ib[0]] + ib[1] + base[ib[0] :]
    )
    spans = [m.span() for m in _TOKEN.finditer(base)] or [(0, 0)]
    replaced = st.tuples(st.sampled_from(spans), st.sampled_from(WEIRD_TOKENS)).map(
        lambda sv: base[: sv[0][0]] + sv[1] + base[sv[0][1] :]
    )
    return st.one_of(truncated, flipped, inserted, replaced)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (to show nothing was written or changed)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def accepted_or_refused(
    call: Callable[[], Any], folder: Path, names: str, error: type[GradeError] = GradeError
) -> Any:
    """Run `call`: it returns, or raises `error` naming `names`; on an error `folder` is
    unchanged. Any other exception fails the test with its traceback."""
    before = tree(folder)
    try:
        return call()
    except error as err:
        refused = err
    assert names in str(refused), f"the message does not name {names!r}: {refused}"
    assert tree(folder) == before, "a refused input left files behind"
    return refused


def loaded_or_refused(
    tmp_path: Path, name: str, data: bytes, load: Callable[[Path], Any], error: type[GradeError]
) -> Any:
    """Write `data` as `name` in a folder of its own, then `accepted_or_refused(load(file))`.

    Hypothesis reuses `tmp_path` across examples, so the file is simply rewritten each time.
    """
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    file = folder / name
    file.write_bytes(data)
    return accepted_or_refused(lambda: load(file), folder, str(file), error)
