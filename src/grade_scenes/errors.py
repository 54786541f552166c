"""Errors of grade_scenes: one base, a few kinds, each carrying the value and a next step."""

from __future__ import annotations

from grade_common.errors import ConfigError, GradeError


class ScenesError(GradeError):
    """Base of the scene tools' errors."""


class ObjectSetError(ConfigError):
    """An object-set file or entry is invalid (names the key, the value, what is allowed)."""


class AssetsMissingError(ScenesError):
    """A package that ships meshes or a robot model is not installed."""


class GenerationError(ScenesError):
    """Scene generation or selection could not meet its constraints."""
