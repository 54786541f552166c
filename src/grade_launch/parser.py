"""The ROS 2 YAML launch frontend (a faithful subset): a launch file read into `actions`.

`parse_launch_file` checks a file against the supported subset; every unknown tag, attribute or
substitution is an error naming it, the file and the line. Values stay templates: substitutions
are evaluated only when the actions are executed (`executor`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from grade_common.textfile import read_text
from grade_launch.actions import (
    Action,
    Condition,
    DeclareArg,
    Group,
    Include,
    IncludeArg,
    LaunchFile,
    NodeDecl,
    ParamFile,
    ParamList,
    ParamScalar,
    ParamValue,
    PushNamespace,
    Remap,
    SetEnv,
    SetLaunchConfiguration,
    Where,
)
from grade_launch.errors import LaunchFileError
from grade_launch.substitution import Part, SubstitutionError, Template, Text, parse_template

_CONDITION_KEYS = frozenset({"if", "unless"})
# tag -> attributes it accepts (besides `if` / `unless`)
SCHEMA: dict[str, frozenset[str]] = {
    "arg": frozenset({"name", "default", "description"}),
    "let": frozenset({"name", "value"}),
    "set_env": frozenset({"name", "value"}),
    "push_ros_namespace": frozenset({"namespace"}),
    "push-ros-namespace": frozenset({"namespace"}),
    "group": frozenset({"scoped", "children"}),
    "include": frozenset({"file", "arg"}),
    "node": frozenset(
        {
            "pkg",
            "exec",
            "name",
            "namespace",
            "output",
            "param",
            "remap",
            "args",
            "ros_args",
            "on_exit",
        }
    ),
}
_NAME_VALUE_ACTIONS: dict[str, type[SetLaunchConfiguration] | type[SetEnv]] = {
    "let": SetLaunchConfiguration,
    "set_env": SetEnv,
}
_PARAM_KEYS = frozenset({"name", "value", "from"})
_REMAP_KEYS = frozenset({"from", "to"})
_INCLUDE_ARG_KEYS = frozenset({"name", "value"})
_STR_TAG = "tag:yaml.org,2002:str"
_BOOL_TAG = "tag:yaml.org,2002:bool"


def parse_launch_file(path: Path) -> LaunchFile:
    """Read a YAML launch file and check it against the supported frontend subset.

    Raises:
        LaunchFileError: unreadable file, bad YAML, unknown tag / attribute / substitution,
            malformed substitution, or a value of the wrong kind; the message names file:line.
    """
    path = Path(path)
    return LaunchFile(path, _FileParser(path).root(_load_yaml(path)))


def _load_yaml(path: Path) -> yaml.Node:
    text = read_text(path, "launch file", error=LaunchFileError)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise LaunchFileError(f"{path}:{line}: invalid YAML: {err}") from err
    except RecursionError as err:
        raise LaunchFileError(f"{path}: invalid YAML: nested too deeply") from err
    if node is None:
        raise LaunchFileError(f"{path}:1: empty launch file; expected a 'launch:' list")
    return node


def _scalar_text(node: yaml.Node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


class _FileParser:
    """Turns the composed YAML of one file into actions; errors carry this file's line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Composing keeps line numbers; this constructor types the few non-string scalars.
        self._constructor = yaml.SafeLoader("")

    def where(self, node: yaml.Node) -> Where:
        return Where(self.path, node.start_mark.line + 1)

    def fail(self, node: yaml.Node, message: str) -> LaunchFileError:
        return LaunchFileError(f"{self.where(node)}: {message}")

    def parse_text(self, text: str, node: yaml.Node) -> Template:
        try:
            return parse_template(text)
        except SubstitutionError as err:
            raise self.fail(node, str(err)) from err

    def construct(self, node: yaml.Node) -> object:
        return self._constructor.construct_object(node)

    def root(self, node: yaml.Node) -> tuple[Action, ...]:
        if (
            not isinstance(node, yaml.MappingNode)
            or len(node.value) != 1
            or _scalar_text(node.value[0][0]) != "launch"
        ):
            raise self.fail(
                node,
                "a launch file is a mapping with the single key 'launch:' "
                "holding a list of actions",
            )
        return self.actions(node.value[0][1], "launch")

    def actions(self, node: yaml.Node, owner: str) -> tuple[Action, ...]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"'{owner}' must hold a list of actions (`- node: ...`)")
        return tuple(self.action(item) for item in node.value)

    def element(
        self, node: yaml.Node, tag: str, allowed: frozenset[str], owner: yaml.Node
    ) -> _Element:
        """The attributes of mapping `node`, each checked against `allowed`."""
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"'{tag}' must be a mapping of attributes")
        attrs: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = _scalar_text(key_node)
            if key is None:
                raise self.fail(key_node, f"attribute names of '{tag}' must be plain strings")
            if key not in allowed:
                raise self.fail(
                    key_node,
                    f"unknown attribute '{key}' of '{tag}'; supported: "
                    + ", ".join(sorted(allowed)),
                )
            if key in attrs:
                raise self.fail(key_node, f"duplicate attribute '{key}' of '{tag}'")
            attrs[key] = (key_node, value_node)
        return _Element(self, tag, owner, attrs)

    def action(self, item: yaml.Node) -> Action:
        if not isinstance(item, yaml.MappingNode) or len(item.value) != 1:
            raise self.fail(
                item,
                "each action is a mapping with one key, its tag "
                "(e.g. `- node: {pkg: ..., exec: ...}`)",
            )
        tag_node, body = item.value[0]
        tag = _scalar_text(tag_node)
        if tag is None or tag not in SCHEMA:
            raise self.fail(
                tag_node, f"unknown tag '{tag}'; supported: " + ", ".join(sorted(SCHEMA))
            )
        element = self.element(body, tag, SCHEMA[tag] | _CONDITION_KEYS, tag_node)
        where, cond = element.where, element.condition()
        if tag == "arg":
            name = element.string("name")
            default = element.optional_template("default")
            description = element.string("description") if "description" in element else ""
            return DeclareArg(where, cond, name, default, description)
        if tag in _NAME_VALUE_ACTIONS:
            key, value = element.template("name"), element.template("value")
            return _NAME_VALUE_ACTIONS[tag](where, cond, key, value)
        if tag in ("push_ros_namespace", "push-ros-namespace"):
            return PushNamespace(where, cond, element.template("namespace"))
        if tag == "group":
            return self.group(element, cond)
        if tag == "include":
            args = tuple(
                IncludeArg(a.where, a.template("name"), a.template("value"))
                for a in element.entities("arg", _INCLUDE_ARG_KEYS)
            )
            return Include(where, cond, element.template("file"), args)
        return self.node(element, cond)

    def group(self, element: _Element, cond: Condition | None) -> Group:
        scoped: bool | Template = True
        if "scoped" in element:
            node = element.value_node("scoped")
            if isinstance(node, yaml.ScalarNode) and node.tag == _BOOL_TAG:
                scoped = bool(self.construct(node))
            else:
                scoped = element.template("scoped")
        if "children" not in element:
            raise element.fail("'group' needs the attribute 'children' (its actions)")
        children = self.actions(element.value_node("children"), "group.children")
        return Group(element.where, cond, scoped, children)

    def node(self, element: _Element, cond: Condition | None) -> NodeDecl:
        params = tuple(self.param(p) for p in element.entities("param", _PARAM_KEYS))
        remaps = tuple(
            Remap(r.where, r.template("from"), r.template("to"))
            for r in element.entities("remap", _REMAP_KEYS)
        )
        shutdown = False
        if "on_exit" in element:
            value = element.string("on_exit")
            if value != "shutdown":
                raise self.fail(
                    element.value_node("on_exit"),
                    f"attribute 'on_exit' of 'node' must be 'shutdown', got '{value}'",
                )
            shutdown = True
        args = element.cmdline("args") if "args" in element else ()
        ros_args = element.cmdline("ros_args") if "ros_args" in element else None
        return NodeDecl(
            element.where,
            cond,
            package=element.optional_template("pkg"),
            executable=element.template("exec"),
            name=element.optional_template("name"),
            namespace=element.optional_template("namespace"),
            output=element.optional_template("output"),
            params=params,
            remaps=remaps,
            args=args,
            ros_args=ros_args,
            shutdown_on_exit=shutdown,
        )

    def param(self, param: _Element) -> ParamFile | ParamValue:
        if "from" in param and "name" in param:
            raise param.fail("'name' and 'from' of a node param are mutually exclusive")
        if "from" in param:
            if "value" in param:
                raise param.fail("a 'from' param takes no 'value'")
            return ParamFile(param.where, param.template("from"))
        if "name" not in param:
            raise param.fail("a node param needs 'name' and 'value', or 'from'")
        if "value" not in param:
            raise param.fail("a node param needs 'value' (nested params are not supported)")
        name = param.template("name")
        return ParamValue(param.where, name, self.param_value(param.value_node("value")))

    def param_value(self, node: yaml.Node) -> ParamScalar | ParamList:
        if isinstance(node, yaml.SequenceNode):
            return ParamList(tuple(self.param_scalar(item) for item in node.value))
        return self.param_scalar(node)

    def param_scalar(self, node: yaml.Node) -> ParamScalar:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, "a param value must be a scalar or a list of scalars")
        if node.tag == _STR_TAG:
            return self.parse_text(node.value, node)
        value = self.construct(node)
        if not isinstance(value, bool | int | float):
            raise self.fail(node, f"unsupported param value '{node.value}'")
        return value


class _Element:
    """One mapping of attributes: an action's, or one item of its param/remap/arg lists.

    `owner` is the node that errors about a missing attribute point at (an action's tag).
    """

    def __init__(
        self,
        parser: _FileParser,
        tag: str,
        owner: yaml.Node,
        attrs: dict[str, tuple[yaml.Node, yaml.Node]],
    ) -> None:
        self.parser = parser
        self.tag = tag
        self.owner = owner
        self.attrs = attrs

    def __contains__(self, key: str) -> bool:
        return key in self.attrs

    @property
    def where(self) -> Where:
        return self.parser.where(self.owner)

    def fail(self, message: str) -> LaunchFileError:
        return self.parser.fail(self.owner, message)

    def value_node(self, key: str) -> yaml.Node:
        return self.attrs[key][1]

    def string(self, key: str) -> str:
        if key not in self.attrs:
            raise self.fail(f"'{self.tag}' needs the attribute '{key}'")
        node = self.value_node(key)
        if not isinstance(node, yaml.ScalarNode):
            raise self.parser.fail(node, f"attribute '{key}' of '{self.tag}' must be a string")
        if node.tag != _STR_TAG:
            # launch's YAML frontend rejects non-string values here: quote them.
            raise self.parser.fail(
                node,
                f"attribute '{key}' of '{self.tag}' must be a string, got "
                f"'{node.value}'; quote it: {key}: "
                f'"{node.value}"',
            )
        text: str = node.value
        return text

    def template(self, key: str) -> Template:
        return self.parser.parse_text(self.string(key), self.value_node(key))

    def optional_template(self, key: str) -> Template | None:
        return self.template(key) if key in self.attrs else None

    def condition(self) -> Condition | None:
        if "if" in self.attrs and "unless" in self.attrs:
            raise self.fail(f"'{self.tag}' has both 'if' and 'unless'; use one")
        for key in ("if", "unless"):
            if key in self.attrs:
                where = self.parser.where(self.value_node(key))
                return Condition(self.template(key), key == "unless", where)
        return None

    def entities(self, key: str, allowed: frozenset[str]) -> list[_Element]:
        """The mappings listed under attribute `key` (none when it is absent)."""
        if key not in self.attrs:
            return []
        node = self.value_node(key)
        if not isinstance(node, yaml.SequenceNode):
            raise self.parser.fail(
                node, f"attribute '{key}' of '{self.tag}' must be a list of mappings"
            )
        tag = f"{self.tag}.{key}"
        return [self.parser.element(item, tag, allowed, item) for item in node.value]

    def cmdline(self, key: str) -> tuple[Template, ...]:
        try:
            return _split_cmdline(self.template(key))
        except ValueError as err:
            message = f"attribute '{key}' of '{self.tag}': {err}"
            raise self.parser.fail(self.value_node(key), message) from err


def _split_cmdline(template: Template) -> tuple[Template, ...]:
    """Split a command line like launch's ExecuteProcess._parse_cmdline: literal text is split
    by shell rules (shlex); substitution results are never split.

    Raises:
        ValueError: unbalanced quotes in the literal text.
    """
    result: list[Template] = []
    current: list[Part] = []

    def flush() -> None:
        if current:
            result.append(tuple(current))
            current.clear()

    for part in template:
        if not isinstance(part, Text):
            current.append(part)
            continue
        tokens = shlex.split(part.text)
        if not tokens:
            flush()
            continue
        if part.text[0].isspace():
            flush()
        current.append(Text(tokens[0]))
        if len(tokens) > 1:
            flush()
            result.extend((Text(t),) for t in tokens[1:-1])
            current.append(Text(tokens[-1]))
        if part.text[-1].isspace():
            flush()
    flush()
    return tuple(result)
