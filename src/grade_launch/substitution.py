"""The `$(...)` substitution language of the ROS 2 launch frontend (a supported subset).

The syntax follows launch's `frontend/grammar.lark`: `$(NAME ARG ARG ...)`, arguments separated
by one space, an argument is unquoted text (no spaces or parentheses), nested substitutions, or a
'single' / "double" quoted template; `\\X` escapes X anywhere. A `$` that does not start a
substitution must be escaped, as in launch. Only `var`, `env` and `find-pkg-share` are supported;
anything else is an error naming it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# name -> (fewest, most) arguments
SUBSTITUTIONS: dict[str, tuple[int, int]] = {
    "var": (1, 2),
    "env": (1, 2),
    "find-pkg-share": (1, 1),
}

# The look-up substitutions `$(NAME KEY [DEFAULT])` -> the error when KEY is missing and there
# is no default.
_LOOKUP_MISSING: dict[str, str] = {
    "var": "launch configuration '{}' does not exist (declare it with an `arg` or `let` first)",
    "env": "environment variable '{}' does not exist (give a default: $(env NAME DEFAULT))",
}

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class SubstitutionError(Exception):
    """A substitution is malformed, unknown or cannot be evaluated (the caller adds file/line)."""


@dataclass(frozen=True)
class Text:
    """Literal text of a template."""

    text: str


@dataclass(frozen=True)
class Substitution:
    """One `$(name args...)`; each argument is itself a template."""

    name: str
    args: tuple[Template, ...]


Part = Text | Substitution
Template = tuple[Part, ...]


def is_literal(template: Template) -> bool:
    """True when the template has no substitution."""
    return all(isinstance(p, Text) for p in template)


class _Parser:
    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    def error(self, what: str) -> SubstitutionError:
        return SubstitutionError(f"{what} at character {self.i + 1} of {self.s!r}")

    def text(self, stops: str, quote: str | None) -> list[Part]:
        """Literal text and substitutions from here up to a character of `stops` (or the end).

        `quote` is the quote character enclosing this text, if any, passed on to nested
        substitutions so their arguments end at it too.
        """
        parts: list[Part] = []
        buf: list[str] = []
        s = self.s
        while self.i < len(s) and s[self.i] not in stops:
            c = s[self.i]
            if c == "\\":
                buf.append(s[self.i + 1] if self.i + 1 < len(s) else "\\")
                self.i += 2
            elif c == "$":
                if not s.startswith("$(", self.i):
                    raise self.error(
                        "a '$' that does not start a substitution must be escaped as '\\$'"
                    )
                if buf:
                    parts.append(Text("".join(buf)))
                    buf = []
                parts.append(self.substitution(quote))
            else:
                buf.append(c)
                self.i += 1
        if buf:
            parts.append(Text("".join(buf)))
        return parts

    def template(self) -> Template:
        return tuple(self.text("", None))

    def substitution(self, quote: str | None) -> Substitution:
        self.i += 2  # "$("
        match = _IDENTIFIER.match(self.s, self.i)
        if match is None:
            raise self.error("expected a substitution name after '$('")
        name = match.group(0)
        self.i = match.end()
        if name not in SUBSTITUTIONS:
            raise SubstitutionError(
                f"unknown substitution '$({name} ...)' in {self.s!r}; supported: "
                + ", ".join(f"$({n})" for n in SUBSTITUTIONS)
            )
        args: list[Template] = []
        while True:
            if self.i >= len(self.s):
                raise self.error(f"unterminated substitution '$({name}'")
            c = self.s[self.i]
            if c == ")":
                self.i += 1
                break
            if c != " ":
                raise self.error(f"expected ' ' or ')' in '$({name} ...)'")
            self.i += 1
            args.append(self.value(quote))
        fewest, most = SUBSTITUTIONS[name]
        if not fewest <= len(args) <= most:
            count = str(fewest) if fewest == most else f"{fewest} to {most}"
            raise SubstitutionError(
                f"'$({name} ...)' takes {count} argument(s), got {len(args)} in {self.s!r}"
            )
        return Substitution(name, tuple(args))

    def value(self, quote: str | None) -> Template:
        s = self.s
        if quote is None and self.i < len(s) and s[self.i] in "'\"":
            return self.quoted(s[self.i])
        parts = self.text(" ()" + (quote if quote is not None else "'\""), quote)
        if not parts:
            raise self.error("empty substitution argument")
        return tuple(parts)

    def quoted(self, q: str) -> Template:
        self.i += 1
        parts = self.text(q, q)
        if self.i >= len(self.s):
            raise self.error(f"unterminated {q}quoted{q} argument")
        self.i += 1  # the closing quote
        return tuple(parts)


def parse_template(source: str) -> Template:
    """Parse a string of the launch frontend into literal text and substitutions.

    Raises:
        SubstitutionError: malformed syntax, an unknown substitution, or a wrong argument count.
    """
    if not source:
        return (Text(""),)
    return _Parser(source).template()


def find_package_prefix(package: str) -> Path:
    """The ament prefix holding `package`, searched over AMENT_PREFIX_PATH in order.

    Raises:
        SubstitutionError: the package is not registered in any prefix.
    """
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    for prefix in prefixes:
        marker = Path(prefix) / "share/ament_index/resource_index/packages" / package
        if marker.is_file():
            return Path(prefix)
    raise SubstitutionError(
        f"package '{package}' not found, searching AMENT_PREFIX_PATH: {prefixes}"
    )


@dataclass
class Context:
    """What substitutions read: launch configurations (all strings) and the environment."""

    launch_configurations: dict[str, str]
    environment: dict[str, str]


def evaluate(template: Template, context: Context) -> str:
    """Evaluate a template to a string.

    Raises:
        SubstitutionError: an undefined launch configuration or environment variable without a
            default, or an unknown package.
    """
    return "".join(_evaluate_part(p, context) for p in template)


def _evaluate_part(part: Part, context: Context) -> str:
    if isinstance(part, Text):
        return part.text
    args = [evaluate(a, context) for a in part.args]
    if part.name in _LOOKUP_MISSING:
        table = context.launch_configurations if part.name == "var" else context.environment
        if args[0] in table:
            return table[args[0]]
        if len(args) == 2:
            return args[1]  # the default
        raise SubstitutionError(_LOOKUP_MISSING[part.name].format(args[0]))
    if part.name == "find-pkg-share":
        return str(find_package_prefix(args[0]) / "share" / args[0])
    raise SubstitutionError(f"unknown substitution '$({part.name})'")  # parse prevents this
