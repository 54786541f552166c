"""The ROS 2 YAML launch frontend (a faithful subset) turned into a plan of node processes.

`parse_launch_file` checks a file against the supported subset and returns its actions; every
unknown tag, attribute or substitution is an error naming it, the file and the line.
`plan_launch` then executes the actions the way launch/launch_ros do (launch configurations,
scoped groups, pushed ROS namespaces, includes, environment, conditions) and returns each node's
command line exactly as launch_ros builds it:

    EXEC [args...] [--ros-args ros_args...] --ros-args [-r __node:=NAME] [-r __ns:=/NS]
         [--params-file FILE ...] [-r from:=to ...]

`param` entries become one `--params-file` each, in declaration order: a `from:` file is passed
unchanged, a name/value pair is written to a temporary file under `/<ns>/<name>` when the node
name and namespace are both known, else under `/**`, as launch_ros does.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import yaml

from grade_launch.errors import LaunchFileError
from grade_launch.substitution import (
    Context,
    Part,
    SubstitutionError,
    Template,
    Text,
    evaluate,
    find_package_prefix,
    parse_template,
)

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
_PARAM_KEYS = frozenset({"name", "value", "from"})
_REMAP_KEYS = frozenset({"from", "to"})
_INCLUDE_ARG_KEYS = frozenset({"name", "value"})
_STR_TAG = "tag:yaml.org,2002:str"
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMESPACE_RE = re.compile(r"/|(/[A-Za-z_][A-Za-z0-9_]*)+")
_MAX_INCLUDE_DEPTH = 32


class Output(Enum):
    """Where a process's output goes, as launch's `output` attribute."""

    SCREEN = "screen"  # stdout and stderr to the screen
    LOG = "log"  # stdout and stderr to the log file, stderr also to the screen
    BOTH = "both"  # stdout and stderr to the screen and the log file


@dataclass(frozen=True)
class Where:
    """A place in a launch file (line counts from 1)."""

    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Condition:
    """An `if` (negate=False) or `unless` (negate=True) attribute."""

    expression: Template
    negate: bool
    where: Where


@dataclass(frozen=True)
class DeclareArg:
    where: Where
    condition: Condition | None
    name: str
    default: Template | None
    description: str


@dataclass(frozen=True)
class SetLaunchConfiguration:
    where: Where
    condition: Condition | None
    name: Template
    value: Template


@dataclass(frozen=True)
class SetEnv:
    where: Where
    condition: Condition | None
    name: Template
    value: Template


@dataclass(frozen=True)
class PushNamespace:
    where: Where
    condition: Condition | None
    namespace: Template


@dataclass(frozen=True)
class Group:
    where: Where
    condition: Condition | None
    scoped: bool | Template
    children: tuple[Action, ...]


@dataclass(frozen=True)
class IncludeArg:
    where: Where
    name: Template
    value: Template


@dataclass(frozen=True)
class Include:
    where: Where
    condition: Condition | None
    file: Template
    args: tuple[IncludeArg, ...]


ParamScalar = Template | bool | int | float


@dataclass(frozen=True)
class ParamList:
    """A list-valued param (each item a scalar)."""

    items: tuple[ParamScalar, ...]


@dataclass(frozen=True)
class ParamFile:
    where: Where
    path: Template


@dataclass(frozen=True)
class ParamValue:
    where: Where
    name: Template
    value: ParamScalar | ParamList


@dataclass(frozen=True)
class Remap:
    where: Where
    source: Template
    target: Template


@dataclass(frozen=True)
class NodeDecl:
    where: Where
    condition: Condition | None
    package: Template | None
    executable: Template
    name: Template | None
    namespace: Template | None
    output: Template | None
    params: tuple[ParamFile | ParamValue, ...]
    remaps: tuple[Remap, ...]
    args: tuple[Template, ...]
    ros_args: tuple[Template, ...] | None
    shutdown_on_exit: bool


Action = DeclareArg | SetLaunchConfiguration | SetEnv | PushNamespace | Group | Include | NodeDecl


@dataclass(frozen=True)
class LaunchFile:
    """A parsed launch file."""

    path: Path
    actions: tuple[Action, ...]


# ------------------------------------------------------------------------------------ parsing


def _load_yaml(path: Path) -> yaml.Node:
    try:
        text = path.read_text()
    except OSError as err:
        raise LaunchFileError(f"cannot read launch file {path}: {err.strerror}") from err
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise LaunchFileError(f"{path}:{line}: invalid YAML: {err}") from err
    if node is None:
        raise LaunchFileError(f"{path}:1: empty launch file; expected a 'launch:' list")
    return node


class _FileParser:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._constructor = yaml.SafeLoader("")

    def where(self, node: yaml.Node) -> Where:
        return Where(self.path, node.start_mark.line + 1)

    def fail(self, node: yaml.Node, message: str) -> LaunchFileError:
        return LaunchFileError(f"{self.where(node)}: {message}")

    def root(self, node: yaml.Node) -> tuple[Action, ...]:
        if (
            not isinstance(node, yaml.MappingNode)
            or len(node.value) != 1
            or self.scalar_text(node.value[0][0]) != "launch"
        ):
            raise self.fail(
                node,
                "a launch file is a mapping with the single key 'launch:' "
                "holding a list of actions",
            )
        return self.actions(node.value[0][1], "launch")

    def scalar_text(self, node: yaml.Node) -> str | None:
        return node.value if isinstance(node, yaml.ScalarNode) else None

    def actions(self, node: yaml.Node, owner: str) -> tuple[Action, ...]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"'{owner}' must hold a list of actions (`- node: ...`)")
        return tuple(self.action(item) for item in node.value)

    def mapping(
        self, node: yaml.Node, tag: str, allowed: frozenset[str]
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"'{tag}' must be a mapping of attributes")
        attrs: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = self.scalar_text(key_node)
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
        return attrs

    def string(
        self, attrs: dict[str, tuple[yaml.Node, yaml.Node]], key: str, tag: str, owner: yaml.Node
    ) -> str:
        if key not in attrs:
            raise self.fail(owner, f"'{tag}' needs the attribute '{key}'")
        value_node = attrs[key][1]
        if not isinstance(value_node, yaml.ScalarNode):
            raise self.fail(value_node, f"attribute '{key}' of '{tag}' must be a string")
        if value_node.tag != _STR_TAG:
            # launch's YAML frontend rejects non-string values here: quote them.
            raise self.fail(
                value_node,
                f"attribute '{key}' of '{tag}' must be a string, got "
                f"'{value_node.value}'; quote it: {key}: "
                f'"{value_node.value}"',
            )
        text: str = value_node.value
        return text

    def template(
        self, attrs: dict[str, tuple[yaml.Node, yaml.Node]], key: str, tag: str, owner: yaml.Node
    ) -> Template:
        text = self.string(attrs, key, tag, owner)
        return self.parse_text(text, attrs[key][1])

    def optional_template(
        self, attrs: dict[str, tuple[yaml.Node, yaml.Node]], key: str, tag: str, owner: yaml.Node
    ) -> Template | None:
        return self.template(attrs, key, tag, owner) if key in attrs else None

    def parse_text(self, text: str, node: yaml.Node) -> Template:
        try:
            return parse_template(text)
        except SubstitutionError as err:
            raise self.fail(node, str(err)) from err

    def entity_list(
        self,
        attrs: dict[str, tuple[yaml.Node, yaml.Node]],
        key: str,
        tag: str,
        allowed: frozenset[str],
    ) -> list[tuple[yaml.Node, dict[str, tuple[yaml.Node, yaml.Node]]]]:
        if key not in attrs:
            return []
        node = attrs[key][1]
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"attribute '{key}' of '{tag}' must be a list of mappings")
        return [(item, self.mapping(item, f"{tag}.{key}", allowed)) for item in node.value]

    def condition(
        self, attrs: dict[str, tuple[yaml.Node, yaml.Node]], tag: str, owner: yaml.Node
    ) -> Condition | None:
        if "if" in attrs and "unless" in attrs:
            raise self.fail(owner, f"'{tag}' has both 'if' and 'unless'; use one")
        for key in ("if", "unless"):
            if key in attrs:
                return Condition(
                    self.template(attrs, key, tag, owner),
                    key == "unless",
                    self.where(attrs[key][1]),
                )
        return None

    def action(self, item: yaml.Node) -> Action:
        if not isinstance(item, yaml.MappingNode) or len(item.value) != 1:
            raise self.fail(
                item,
                "each action is a mapping with one key, its tag "
                "(e.g. `- node: {pkg: ..., exec: ...}`)",
            )
        tag_node, body = item.value[0]
        tag = self.scalar_text(tag_node)
        if tag not in SCHEMA:
            raise self.fail(
                tag_node, f"unknown tag '{tag}'; supported: " + ", ".join(sorted(SCHEMA))
            )
        attrs = self.mapping(body, tag, SCHEMA[tag] | _CONDITION_KEYS)
        where = self.where(tag_node)
        cond = self.condition(attrs, tag, tag_node)
        if tag == "arg":
            name = self.string(attrs, "name", tag, tag_node)
            default = self.optional_template(attrs, "default", tag, tag_node)
            description = (
                self.string(attrs, "description", tag, tag_node) if "description" in attrs else ""
            )
            return DeclareArg(where, cond, name, default, description)
        if tag == "let":
            return SetLaunchConfiguration(
                where,
                cond,
                self.template(attrs, "name", tag, tag_node),
                self.template(attrs, "value", tag, tag_node),
            )
        if tag == "set_env":
            return SetEnv(
                where,
                cond,
                self.template(attrs, "name", tag, tag_node),
                self.template(attrs, "value", tag, tag_node),
            )
        if tag in ("push_ros_namespace", "push-ros-namespace"):
            return PushNamespace(where, cond, self.template(attrs, "namespace", tag, tag_node))
        if tag == "group":
            return self.group(where, cond, attrs, tag_node)
        if tag == "include":
            args = tuple(
                IncludeArg(
                    self.where(item_node),
                    self.template(a, "name", "include.arg", item_node),
                    self.template(a, "value", "include.arg", item_node),
                )
                for item_node, a in self.entity_list(attrs, "arg", tag, _INCLUDE_ARG_KEYS)
            )
            return Include(where, cond, self.template(attrs, "file", tag, tag_node), args)
        return self.node(where, cond, attrs, tag_node)

    def group(
        self,
        where: Where,
        cond: Condition | None,
        attrs: dict[str, tuple[yaml.Node, yaml.Node]],
        tag_node: yaml.Node,
    ) -> Group:
        scoped: bool | Template = True
        if "scoped" in attrs:
            node = attrs["scoped"][1]
            if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:bool":
                scoped = bool(self._constructor.construct_object(node))
            else:
                scoped = self.template(attrs, "scoped", "group", tag_node)
        if "children" not in attrs:
            raise self.fail(tag_node, "'group' needs the attribute 'children' (its actions)")
        return Group(where, cond, scoped, self.actions(attrs["children"][1], "group.children"))

    def node(
        self,
        where: Where,
        cond: Condition | None,
        attrs: dict[str, tuple[yaml.Node, yaml.Node]],
        tag_node: yaml.Node,
    ) -> NodeDecl:
        tag = "node"
        params: list[ParamFile | ParamValue] = []
        for item_node, p in self.entity_list(attrs, "param", tag, _PARAM_KEYS):
            pwhere = self.where(item_node)
            if "from" in p and "name" in p:
                raise self.fail(
                    item_node, "'name' and 'from' of a node param are mutually exclusive"
                )
            if "from" in p:
                if "value" in p:
                    raise self.fail(item_node, "a 'from' param takes no 'value'")
                params.append(ParamFile(pwhere, self.template(p, "from", "node.param", item_node)))
            elif "name" in p:
                if "value" not in p:
                    raise self.fail(
                        item_node, "a node param needs 'value' (nested params are not supported)"
                    )
                params.append(
                    ParamValue(
                        pwhere,
                        self.template(p, "name", "node.param", item_node),
                        self.param_value(p["value"][1]),
                    )
                )
            else:
                raise self.fail(item_node, "a node param needs 'name' and 'value', or 'from'")
        remaps = tuple(
            Remap(
                self.where(item_node),
                self.template(r, "from", "node.remap", item_node),
                self.template(r, "to", "node.remap", item_node),
            )
            for item_node, r in self.entity_list(attrs, "remap", tag, _REMAP_KEYS)
        )
        shutdown = False
        if "on_exit" in attrs:
            value = self.string(attrs, "on_exit", tag, tag_node)
            if value != "shutdown":
                raise self.fail(
                    attrs["on_exit"][1],
                    f"attribute 'on_exit' of 'node' must be 'shutdown', got '{value}'",
                )
            shutdown = True
        args = self.cmdline(attrs, "args", tag_node) if "args" in attrs else ()
        ros_args = self.cmdline(attrs, "ros_args", tag_node) if "ros_args" in attrs else None
        return NodeDecl(
            where,
            cond,
            package=self.optional_template(attrs, "pkg", tag, tag_node),
            executable=self.template(attrs, "exec", tag, tag_node),
            name=self.optional_template(attrs, "name", tag, tag_node),
            namespace=self.optional_template(attrs, "namespace", tag, tag_node),
            output=self.optional_template(attrs, "output", tag, tag_node),
            params=tuple(params),
            remaps=remaps,
            args=args,
            ros_args=ros_args,
            shutdown_on_exit=shutdown,
        )

    def param_value(self, node: yaml.Node) -> ParamScalar | ParamList:
        if isinstance(node, yaml.SequenceNode):
            return ParamList(tuple(self.param_scalar(item) for item in node.value))
        return self.param_scalar(node)

    def param_scalar(self, node: yaml.Node) -> ParamScalar:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, "a param value must be a scalar or a list of scalars")
        if node.tag == _STR_TAG:
            return self.parse_text(node.value, node)
        value = self._constructor.construct_object(node)
        if not isinstance(value, bool | int | float):
            raise self.fail(node, f"unsupported param value '{node.value}'")
        return value

    def cmdline(
        self, attrs: dict[str, tuple[yaml.Node, yaml.Node]], key: str, owner: yaml.Node
    ) -> tuple[Template, ...]:
        """Split a command line like launch's ExecuteProcess._parse_cmdline: literal text is
        split by shell rules (shlex); substitution results are never split."""
        template = self.template(attrs, key, "node", owner)
        result: list[Template] = []
        current: list[Part] = []

        def flush() -> None:
            nonlocal current
            if current:
                result.append(tuple(current))
            current = []

        for part in template:
            if not isinstance(part, Text):
                current.append(part)
                continue
            try:
                tokens = shlex.split(part.text)
            except ValueError as err:
                raise self.fail(attrs[key][1], f"attribute '{key}' of 'node': {err}") from err
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


def parse_launch_file(path: Path) -> LaunchFile:
    """Read a YAML launch file and check it against the supported frontend subset.

    Raises:
        LaunchFileError: unreadable file, bad YAML, unknown tag / attribute / substitution,
            malformed substitution, or a value of the wrong kind; the message names file:line.
    """
    path = Path(path)
    return LaunchFile(path, _FileParser(path).root(_load_yaml(path)))


# ---------------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class ProcessPlan:
    """One node process as `ros2 launch` would start it."""

    label: str  # `[label]` output prefix: node name (or executable) and a launch-wide counter
    node_name: str | None  # fully qualified when name and namespace are known
    cmd: tuple[str, ...]
    env: Mapping[str, str]
    output: Output
    shutdown_on_exit: bool
    where: Where


@dataclass(frozen=True)
class LaunchPlan:
    """Every process of a launch, in start order, and the final launch configurations."""

    processes: tuple[ProcessPlan, ...]
    launch_configurations: Mapping[str, str]


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


def _typed_value(text: str) -> bool | int | float | str | list[object]:
    """Type a substituted param string by YAML rules, as launch does for untyped values."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(value, bool | int | float | str):
        return value
    if (
        isinstance(value, list)
        and value
        and len({type(v) for v in value}) == 1
        and isinstance(value[0], bool | int | float | str)
    ):
        return list(value)
    return text


class _Executor:
    def __init__(
        self, arguments: Mapping[str, str], environ: Mapping[str, str], params_dir: Path
    ) -> None:
        self.context = Context(dict(arguments), dict(environ))
        self.params_dir = params_dir
        self.processes: list[ProcessPlan] = []
        self.depth = 0

    def eval(self, template: Template, where: Where) -> str:
        try:
            return evaluate(template, self.context)
        except SubstitutionError as err:
            raise LaunchFileError(f"{where}: {err}") from err

    def holds(self, condition: Condition | None) -> bool:
        if condition is None:
            return True
        value = self.eval(condition.expression, condition.where)
        lowered = value.strip().lower()  # as launch's evaluate_condition_expression
        if lowered not in ("true", "false", "1", "0"):
            key = "unless" if condition.negate else "if"
            raise LaunchFileError(
                f"{condition.where}: condition '{key}' evaluated to "
                f"'{value}'; expected one of true, false, 1, 0"
            )
        return (lowered in ("true", "1")) != condition.negate

    def run(self, actions: Sequence[Action]) -> None:
        for action in actions:
            if self.holds(action.condition):
                self.execute(action)

    def execute(self, action: Action) -> None:
        lc = self.context.launch_configurations
        if isinstance(action, DeclareArg):
            if action.name not in lc:
                if action.default is None:
                    raise LaunchFileError(
                        f"{action.where}: required launch argument '{action.name}' "
                        f"(description: '{action.description}') was not provided; pass "
                        f"{action.name}:=VALUE"
                    )
                lc[action.name] = self.eval(action.default, action.where)
        elif isinstance(action, SetLaunchConfiguration):
            lc[self.eval(action.name, action.where)] = self.eval(action.value, action.where)
        elif isinstance(action, SetEnv):
            name = self.eval(action.name, action.where)
            self.context.environment[name] = self.eval(action.value, action.where)
        elif isinstance(action, PushNamespace):
            pushed = self.eval(action.namespace, action.where)
            namespace = make_namespace_absolute(prefix_namespace(lc.get("ros_namespace"), pushed))
            if namespace is None or not _NAMESPACE_RE.fullmatch(namespace):
                raise LaunchFileError(
                    f"{action.where}: the resulting namespace '{namespace}' is "
                    f"invalid (previous '{lc.get('ros_namespace')}', pushed "
                    f"'{pushed}')"
                )
            lc["ros_namespace"] = namespace
        elif isinstance(action, Group):
            self.group(action)
        elif isinstance(action, Include):
            self.include(action)
        else:
            self.node(action)

    def group(self, group: Group) -> None:
        scoped = group.scoped
        if not isinstance(scoped, bool):
            text = self.eval(scoped, group.where)
            if text.lower() not in ("true", "false"):
                raise LaunchFileError(
                    f"{group.where}: 'scoped' of 'group' must be true or false, got '{text}'"
                )
            scoped = text.lower() == "true"
        if not scoped:
            self.run(group.children)
            return
        saved_lc = dict(self.context.launch_configurations)
        saved_env = dict(self.context.environment)
        try:
            self.run(group.children)
        finally:
            self.context.launch_configurations = saved_lc
            self.context.environment = saved_env

    def include(self, include: Include) -> None:
        path = Path(self.eval(include.file, include.where))
        if not path.is_file():
            raise LaunchFileError(f"{include.where}: included launch file '{path}' not found")
        if self.depth >= _MAX_INCLUDE_DEPTH:
            raise LaunchFileError(
                f"{include.where}: includes nested deeper than "
                f"{_MAX_INCLUDE_DEPTH}; is there an include cycle?"
            )
        included = parse_launch_file(path)
        names = [self.eval(a.name, a.where) for a in include.args]
        for declared in _unconditional_args(included.actions):
            if declared.default is None and declared.name not in names:
                raise LaunchFileError(
                    f"{include.where}: included launch file {path} is missing required argument "
                    f"'{declared.name}' (description: '{declared.description}'), given: "
                    f"[{', '.join(names)}]"
                )
        # launch sets include arguments as launch configurations of the current scope in order.
        for arg in include.args:
            name = self.eval(arg.name, arg.where)
            self.context.launch_configurations[name] = self.eval(arg.value, arg.where)
        self.depth += 1
        try:
            self.run(included.actions)
        finally:
            self.depth -= 1

    def node(self, node: NodeDecl) -> None:
        where = node.where
        executable = self.eval(node.executable, where)
        if node.package is not None:
            package = self.eval(node.package, where)
            try:
                prefix = find_package_prefix(package)
            except SubstitutionError as err:
                raise LaunchFileError(f"{where}: {err}") from err
            exe_path = prefix / "lib" / package / executable
            if not (exe_path.is_file() and os.access(exe_path, os.X_OK)):
                raise LaunchFileError(
                    f"{where}: executable '{executable}' not found in the "
                    f"libexec directory '{prefix / 'lib' / package}'"
                )
            exe = str(exe_path)
        else:
            found = shutil.which(executable, path=self.context.environment.get("PATH"))
            if found is None:
                raise LaunchFileError(f"{where}: executable '{executable}' not found on PATH")
            exe = found
        cmd = [exe] + [self.eval(a, where) for a in node.args]
        if node.ros_args is not None:
            cmd += ["--ros-args"] + [self.eval(a, where) for a in node.ros_args]
        cmd.append("--ros-args")
        name = self.eval(node.name, where) if node.name is not None else None
        if name is not None:
            if not _NAME_RE.fullmatch(name):
                raise LaunchFileError(
                    f"{where}: invalid node name '{name}' (letters, digits "
                    "and '_', not starting with a digit)"
                )
            cmd += ["-r", f"__node:={name}"]
        ns = self.eval(node.namespace, where) if node.namespace is not None else None
        namespace = make_namespace_absolute(
            prefix_namespace(self.context.launch_configurations.get("ros_namespace"), ns)
        )
        if namespace is not None:
            if not _NAMESPACE_RE.fullmatch(namespace):
                raise LaunchFileError(f"{where}: invalid namespace '{namespace}'")
            cmd += ["-r", f"__ns:={namespace}"]
        full_name = prefix_namespace(namespace, name) if name and namespace else None
        for param in node.params:
            cmd += ["--params-file", self.params_file(param, full_name)]
        for remap in node.remaps:
            cmd += [
                "-r",
                f"{self.eval(remap.source, remap.where)}:={self.eval(remap.target, remap.where)}",
            ]
        output_text = self.eval(node.output, where) if node.output is not None else "log"
        try:
            output = Output(output_text)
        except ValueError:
            raise LaunchFileError(
                f"{where}: output '{output_text}' is not supported; use screen, log or both"
            ) from None
        label = f"{name or Path(executable).name}-{len(self.processes) + 1}"
        self.processes.append(
            ProcessPlan(
                label,
                full_name,
                tuple(cmd),
                dict(self.context.environment),
                output,
                node.shutdown_on_exit,
                where,
            )
        )

    def params_file(self, param: ParamFile | ParamValue, full_name: str | None) -> str:
        if isinstance(param, ParamFile):
            path = self.eval(param.path, param.where)
            if not Path(path).is_file():
                # launch only warns and drops the file; a missing parameter file is an error here.
                raise LaunchFileError(f"{param.where}: parameter file '{path}' not found")
            return path
        name = self.eval(param.name, param.where)
        value: object
        if isinstance(param.value, ParamList):
            value = [self.param_scalar(v, param.where) for v in param.value.items]
        else:
            value = self.param_scalar(param.value, param.where)
        key = full_name if full_name is not None else "/**"
        with tempfile.NamedTemporaryFile(
            "w", prefix="launch_params_", suffix=".yaml", dir=self.params_dir, delete=False
        ) as handle:
            yaml.safe_dump(
                {key: {"ros__parameters": {name: value}}}, handle, default_flow_style=False
            )
        return handle.name

    def param_scalar(self, value: ParamScalar, where: Where) -> object:
        if isinstance(value, tuple):
            return _typed_value(self.eval(value, where))
        return value


def _unconditional_args(actions: Sequence[Action]) -> list[DeclareArg]:
    found: list[DeclareArg] = []
    for action in actions:
        if action.condition is not None:
            continue
        if isinstance(action, DeclareArg):
            found.append(action)
        elif isinstance(action, Group):
            found += _unconditional_args(action.children)
    return found


def plan_launch(
    path: Path,
    arguments: Mapping[str, str],
    params_dir: Path,
    environ: Mapping[str, str] | None = None,
) -> LaunchPlan:
    """Execute a launch file's actions and return the processes `ros2 launch` would start.

    Args:
        path: the YAML launch file.
        arguments: command-line `name:=value` launch arguments (they win over defaults).
        params_dir: an existing directory for the temporary parameter files of inline params.
        environ: the launch environment (default: os.environ).

    Raises:
        LaunchFileError: any frontend, substitution, condition or lookup error, naming file:line.
    """
    launch_file = parse_launch_file(path)
    executor = _Executor(arguments, os.environ if environ is None else environ, params_dir)
    executor.run(launch_file.actions)
    return LaunchPlan(tuple(executor.processes), dict(executor.context.launch_configurations))
