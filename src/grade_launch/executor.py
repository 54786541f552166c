"""Execute a launch file's actions the way launch/launch_ros do, into a plan of node processes.

Launch configurations, scoped groups, pushed ROS namespaces, includes, environment and conditions
follow launch; each node's command line is exactly what launch_ros builds:

    EXEC [args...] [--ros-args ros_args...] --ros-args [-r __node:=NAME] [-r __ns:=/NS]
         [--params-file FILE ...] [-r from:=to ...]

`param` entries become one `--params-file` each, in declaration order: a `from:` file is passed
unchanged, a name/value pair is written to a temporary file under `/<ns>/<name>` when the node
name and namespace are both known, else under `/**`, as launch_ros does.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from grade_launch.actions import (
    Action,
    Condition,
    DeclareArg,
    Group,
    Include,
    NodeDecl,
    ParamFile,
    ParamList,
    ParamScalar,
    ParamValue,
    PushNamespace,
    SetEnv,
    SetLaunchConfiguration,
    Where,
)
from grade_launch.errors import LaunchFileError
from grade_launch.names import (
    check_node_name,
    is_valid_namespace,
    make_namespace_absolute,
    prefix_namespace,
)
from grade_launch.parser import parse_launch_file
from grade_launch.plan import LaunchPlan, Output, ProcessPlan
from grade_launch.substitution import (
    Context,
    SubstitutionError,
    Template,
    evaluate,
    find_package_prefix,
)

_MAX_INCLUDE_DEPTH = 32


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
    return LaunchPlan(
        tuple(executor.processes),
        dict(executor.context.launch_configurations),
        tuple(executor.declared),
    )


class _Executor:
    """The launch context while actions run, and the processes planned so far."""

    def __init__(
        self, arguments: Mapping[str, str], environ: Mapping[str, str], params_dir: Path
    ) -> None:
        self.context = Context(dict(arguments), dict(environ))
        self.params_dir = params_dir
        self.processes: list[ProcessPlan] = []
        self.depth = 0
        self.declared: list[str] = []  # every launch argument declared, in order

    @property
    def ros_namespace(self) -> str | None:
        """The namespace pushed in the current scope (launch_ros keeps it as a configuration)."""
        return self.context.launch_configurations.get("ros_namespace")

    def eval(self, template: Template, where: Where) -> str:
        try:
            return evaluate(template, self.context)
        except SubstitutionError as err:
            raise LaunchFileError(f"{where}: {err}") from err

    def eval_optional(self, template: Template | None, where: Where) -> str | None:
        return None if template is None else self.eval(template, where)

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
        if isinstance(action, DeclareArg):
            self.declare_arg(action)
        elif isinstance(action, SetLaunchConfiguration):
            value = self.eval(action.value, action.where)
            self.context.launch_configurations[self.eval(action.name, action.where)] = value
        elif isinstance(action, SetEnv):
            name = self.eval(action.name, action.where)
            self.context.environment[name] = self.eval(action.value, action.where)
        elif isinstance(action, PushNamespace):
            self.push_namespace(action)
        elif isinstance(action, Group):
            self.group(action)
        elif isinstance(action, Include):
            self.include(action)
        else:
            self.node(action)

    def declare_arg(self, arg: DeclareArg) -> None:
        if arg.name not in self.declared:
            self.declared.append(arg.name)
        if arg.name in self.context.launch_configurations:
            return  # given on the command line or by an include: it wins over the default
        if arg.default is None:
            raise LaunchFileError(
                f"{arg.where}: required launch argument '{arg.name}' "
                f"(description: '{arg.description}') was not provided; pass "
                f"{arg.name}:=VALUE"
            )
        self.context.launch_configurations[arg.name] = self.eval(arg.default, arg.where)

    def push_namespace(self, push: PushNamespace) -> None:
        pushed = self.eval(push.namespace, push.where)
        previous = self.ros_namespace
        namespace = make_namespace_absolute(prefix_namespace(previous, pushed))
        if namespace is None or not is_valid_namespace(namespace):
            raise LaunchFileError(
                f"{push.where}: the resulting namespace '{namespace}' is "
                f"invalid (previous '{previous}', pushed '{pushed}')"
            )
        self.context.launch_configurations["ros_namespace"] = namespace

    def group(self, group: Group) -> None:
        if not self.is_scoped(group):
            self.run(group.children)
            return
        saved_lc = dict(self.context.launch_configurations)
        saved_env = dict(self.context.environment)
        try:
            self.run(group.children)
        finally:
            self.context.launch_configurations = saved_lc
            self.context.environment = saved_env

    def is_scoped(self, group: Group) -> bool:
        if isinstance(group.scoped, bool):
            return group.scoped
        text = self.eval(group.scoped, group.where)
        if text.lower() not in ("true", "false"):
            raise LaunchFileError(
                f"{group.where}: 'scoped' of 'group' must be true or false, got '{text}'"
            )
        return text.lower() == "true"

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
        cmd = [self.executable_path(node.package, executable, where)]
        cmd += [self.eval(a, where) for a in node.args]
        if node.ros_args is not None:
            cmd += ["--ros-args"] + [self.eval(a, where) for a in node.ros_args]
        cmd.append("--ros-args")
        name = self.eval_optional(node.name, where)
        if name is not None:
            check_node_name(name, where)
            cmd += ["-r", f"__node:={name}"]
        namespace = self.node_namespace(node)
        if namespace is not None:
            cmd += ["-r", f"__ns:={namespace}"]
        full_name = prefix_namespace(namespace, name) if name and namespace else None
        for param in node.params:
            cmd += ["--params-file", self.params_file(param, full_name)]
        for remap in node.remaps:
            source = self.eval(remap.source, remap.where)
            cmd += ["-r", f"{source}:={self.eval(remap.target, remap.where)}"]
        output = self.output(node)
        label = f"{name or Path(executable).name}-{len(self.processes) + 1}"
        env = dict(self.context.environment)
        plan = ProcessPlan(label, full_name, tuple(cmd), env, output, node.shutdown_on_exit, where)
        self.processes.append(plan)

    def executable_path(
        self, package_template: Template | None, executable: str, where: Where
    ) -> str:
        """A package's libexec executable as launch_ros finds it, else one found on PATH."""
        if package_template is None:
            found = shutil.which(executable, path=self.context.environment.get("PATH"))
            if found is None:
                raise LaunchFileError(f"{where}: executable '{executable}' not found on PATH")
            return found
        package = self.eval(package_template, where)
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
        return str(exe_path)

    def node_namespace(self, node: NodeDecl) -> str | None:
        ns = self.eval_optional(node.namespace, node.where)
        namespace = make_namespace_absolute(prefix_namespace(self.ros_namespace, ns))
        if namespace is not None and not is_valid_namespace(namespace):
            raise LaunchFileError(f"{node.where}: invalid namespace '{namespace}'")
        return namespace

    def output(self, node: NodeDecl) -> Output:
        text = "log" if node.output is None else self.eval(node.output, node.where)
        try:
            return Output(text)
        except ValueError:
            raise LaunchFileError(
                f"{node.where}: output '{text}' is not supported; use screen, log or both"
            ) from None

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


def _unconditional_args(actions: Sequence[Action]) -> list[DeclareArg]:
    """The `arg`s a file always declares (outside conditions), groups included."""
    found: list[DeclareArg] = []
    for action in actions:
        if action.condition is not None:
            continue
        if isinstance(action, DeclareArg):
            found.append(action)
        elif isinstance(action, Group):
            found += _unconditional_args(action.children)
    return found
