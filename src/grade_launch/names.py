"""ROS node names and namespaces, combined and checked exactly as launch_ros does."""

from __future__ import annotations

import re

from grade_launch.actions import Where
from grade_launch.errors import LaunchFileError

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMESPACE_RE = re.compile(r"/|(/[A-Za-z_][A-Za-z0-9_]*)+")


def prefix_namespace(base: str | None, ns: str | None) -> str | None:
    """launch_ros' prefix_namespace: `ns` under `base` unless `ns` is absolute."""
    if base is None and ns is None:
        return None
    if ns is None:
        combined = base
    elif not base or ns.startswith("/"):
        combined = ns
    else:
        combined = ("" if base == "/" else base) + "/" + ns
    if combined and combined != "/":
        combined = combined.rstrip("/") or "/"
    return combined


def make_namespace_absolute(ns: str | None) -> str | None:
    """launch_ros' make_namespace_absolute."""
    if ns is None:
        return None
    return ns if ns.startswith("/") else "/" + ns


def is_valid_namespace(namespace: str | None) -> bool:
    """An absolute namespace of `/`-separated names (`/` itself included)."""
    return namespace is not None and _NAMESPACE_RE.fullmatch(namespace) is not None


def check_node_name(name: str, where: Where) -> None:
    """Raises LaunchFileError unless `name` is a valid (unqualified) node name."""
    if not _NAME_RE.fullmatch(name):
        raise LaunchFileError(
            f"{where}: invalid node name '{name}' (letters, digits "
            "and '_', not starting with a digit)"
        )
