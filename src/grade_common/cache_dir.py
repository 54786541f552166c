"""Where grade keeps what it builds once and then reuses: textures, bakes, the MakeHuman data,
ORB vocabularies.

One rule for every kind: the kind's own environment variable names its folder outright; without
it the folder is `grade/<kind>` under $XDG_CACHE_HOME (the XDG base directory spec), else under
~/.cache.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(env_var: str, *kind: str) -> Path:
    """$<env_var> if set (and not empty), else $XDG_CACHE_HOME/grade/<kind...>, else
    ~/.cache/grade/<kind...>; no `kind`: grade's cache root itself."""
    explicit = os.environ.get(env_var)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache").joinpath("grade", *kind)
