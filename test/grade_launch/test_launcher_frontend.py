"""The YAML launch frontend subset: every tag, substitution, scoping rule and error path."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from grade_launch.cli import main as launch_main
from grade_launch.errors import LaunchFileError
from grade_launch.executor import plan_launch
from grade_launch.names import prefix_namespace
from grade_launch.plan import Output
from grade_launch.substitution import (
    Context,
    SubstitutionError,
    evaluate,
    parse_template,
)
from grade_launch.validate import check_launch_file


@pytest.fixture
def prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary ament prefix with package `demo` and executables `talker` and `listener`."""
    root = tmp_path / "prefix"
    (root / "share/ament_index/resource_index/packages").mkdir(parents=True)
    (root / "share/ament_index/resource_index/packages/demo").write_text("")
    (root / "share/demo/launch").mkdir(parents=True)
    (root / "lib/demo").mkdir(parents=True)
    for exe in ("talker", "listener"):
        (root / "lib/demo" / exe).write_text("#!/bin/sh\nexit 0\n")
        (root / "lib/demo" / exe).chmod(0o755)
    monkeypatch.setenv(
        "AMENT_PREFIX_PATH", f"{root}{os.pathsep}{os.environ.get('AMENT_PREFIX_PATH', '')}"
    )
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plan(
    path: Path,
    tmp_path: Path,
    args: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
):  # type: ignore[no-untyped-def]
    params_dir = tmp_path / "params"
    params_dir.mkdir(exist_ok=True)
    environ = dict(os.environ) if env is None else {**os.environ, **env}
    return plan_launch(path, args or {}, params_dir, environ)


def where(path: Path, line: int) -> str:
    return re.escape(f"{path}:{line}: ")


# ------------------------------------------------------------------------------ substitutions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", "plain text"),
        ("$(var a)", "A"),
        ("x-$(var a)-y", "x-A-y"),
        ("$(var missing dflt)", "dflt"),
        ("$(var missing 'two words')", "two words"),
        ('$(var missing "with $(var a) inside")', "with A inside"),
        ("$(var $(var which))", "A"),
        ("$(var missing $(var a)b)", "Ab"),
        ("$(env GRADE_TEST_ENV)", "from-env"),
        ("$(env GRADE_UNSET_ENV fallback)", "fallback"),
        ("\\$(var a)", "$(var a)"),
        ('it\'s "quoted"', 'it\'s "quoted"'),
        ("", ""),
    ],
)
def test_substitution_evaluates(text: str, expected: str) -> None:
    context = Context({"a": "A", "which": "a"}, {"GRADE_TEST_ENV": "from-env"})
    assert evaluate(parse_template(text), context) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("$(optenv X)", r"unknown substitution '\$\(optenv \.\.\.\)'"),
        ("$(find-pkg-prefix demo)", r"unknown substitution '\$\(find-pkg-prefix"),
        ("$(var)", r"takes 1 to 2 argument\(s\), got 0"),
        ("$(var a b c)", r"takes 1 to 2 argument\(s\), got 3"),
        ("$(find-pkg-share a b)", r"takes 1 argument\(s\), got 2"),
        ("$(var a", "unterminated substitution"),
        ("costs $5", "must be escaped"),
        ("$(var  a)", "empty substitution argument"),
        ("$(var 'a)", "unterminated 'quoted' argument"),
        ("$( var a)", "expected a substitution name"),
    ],
)
def test_substitution_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(SubstitutionError, match=message):
        parse_template(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("$(var nope)", "launch configuration 'nope' does not exist"),
        ("$(env GRADE_UNSET_ENV)", "environment variable 'GRADE_UNSET_ENV' does not exist"),
    ],
)
def test_substitution_evaluation_errors(text: str, message: str) -> None:
    with pytest.raises(SubstitutionError, match=message):
        evaluate(parse_template(text), Context({}, {}))


@pytest.mark.parametrize(
    ("base", "ns", "expected"),
    [
        (None, None, None),
        ("/a", None, "/a"),
        (None, "b", "b"),
        ("/a", "b", "/a/b"),
        ("/a", "/b", "/b"),
        ("/", "b", "/b"),
        ("/a", "b/", "/a/b"),
    ],
)
def test_prefix_namespace_matches_launch_ros(
    base: str | None, ns: str | None, expected: str | None
) -> None:
    assert prefix_namespace(base, ns) == expected


# ------------------------------------------------------------------------------ node commands


def test_node_command_line_is_what_launch_ros_builds(prefix: Path, tmp_path: Path) -> None:
    params = write(tmp_path / "p.yaml", "/**:\n  ros__parameters:\n    a: 1\n")
    launch = write(
        tmp_path / "x.launch.yaml",
        f"""\
launch:
- arg: {{name: robot, default: uav1, description: the robot}}
- group:
    children:
    - push_ros_namespace: {{namespace: "$(var robot)"}}
    - node:
        pkg: demo
        exec: talker
        name: sim
        namespace: inner
        output: screen
        args: "--flag $(var robot) 'two words'"
        ros_args: "--log-level debug"
        param:
        - {{name: rate_hz, value: 10}}
        - {{from: "{params}"}}
        remap:
        - {{from: chatter, to: "/$(var robot)/out"}}
        - {{from: a, to: b}}
- node: {{pkg: demo, exec: listener}}
""",
    )
    result = plan(launch, tmp_path, {"robot": "r2"})
    sim, listener = result.processes
    exe = str(prefix / "lib/demo/talker")
    inline = sim.cmd[sim.cmd.index("--params-file") + 1]
    assert sim.cmd == (
        exe,
        "--flag",
        "r2",
        "two words",
        "--ros-args",
        "--log-level",
        "debug",
        "--ros-args",
        "-r",
        "__node:=sim",
        "-r",
        "__ns:=/r2/inner",
        "--params-file",
        inline,
        "--params-file",
        str(params),
        "-r",
        "chatter:=/r2/out",
        "-r",
        "a:=b",
    )
    assert yaml.safe_load(Path(inline).read_text()) == {
        "/r2/inner/sim": {"ros__parameters": {"rate_hz": 10}}
    }
    assert sim.label == "sim-1"
    assert sim.node_name == "/r2/inner/sim"
    assert sim.output is Output.SCREEN
    # No name, no namespace: no remap rules at all, launch's default output `log`.
    assert listener.cmd == (str(prefix / "lib/demo/listener"), "--ros-args")
    assert listener.label == "listener-2"
    assert listener.output is Output.LOG


def test_inline_params_use_wildcard_without_full_name_and_yaml_typing(
    prefix: Path, tmp_path: Path
) -> None:
    launch = write(
        tmp_path / "x.launch.yaml",
        """\
launch:
- let: {name: r, value: "2.5"}
- node:
    pkg: demo
    exec: talker
    name: only_name
    param:
    - {name: f, value: "$(var r)"}
    - {name: s, value: "text"}
    - {name: b, value: "true"}
    - {name: i, value: 3}
    - {name: l, value: [1, 2]}
    - {name: q, value: "$(var r) m"}
""",
    )
    (process,) = plan(launch, tmp_path).processes
    files = [process.cmd[i + 1] for i, a in enumerate(process.cmd) if a == "--params-file"]
    values = {}
    for file in files:
        content = yaml.safe_load(Path(file).read_text())
        assert list(content) == ["/**"]  # name given but no namespace: not fully specified
        values.update(content["/**"]["ros__parameters"])
    assert values == {"f": 2.5, "s": "text", "b": True, "i": 3, "l": [1, 2], "q": "2.5 m"}


def test_find_pkg_share_and_include_with_args(prefix: Path, tmp_path: Path) -> None:
    write(
        prefix / "share/demo/launch/inner.launch.yaml",
        """\
launch:
- arg: {name: who, description: required here}
- arg: {name: ns, default: "$(var who)_ns"}
- node: {pkg: demo, exec: talker, name: "$(var who)", namespace: "$(var ns)"}
""",
    )
    launch = write(
        tmp_path / "outer.launch.yaml",
        """\
launch:
- include:
    file: "$(find-pkg-share demo)/launch/inner.launch.yaml"
    arg:
    - {name: who, value: alice}
- node: {pkg: demo, exec: listener, name: "after_$(var who)"}
""",
    )
    first, second = plan(launch, tmp_path).processes
    assert first.node_name == "/alice_ns/alice"
    # An include is not scoped in launch: its arguments stay set afterwards.
    assert second.cmd[-1] == "__node:=after_alice"


def test_group_scoping(prefix: Path, tmp_path: Path) -> None:
    launch = write(
        tmp_path / "x.launch.yaml",
        """\
launch:
- let: {name: v, value: outer}
- group:
    children:
    - push_ros_namespace: {namespace: scoped_ns}
    - let: {name: v, value: inner}
    - set_env: {name: GRADE_SCOPED, value: "1"}
    - node: {pkg: demo, exec: talker, name: "a_$(var v)"}
- node: {pkg: demo, exec: talker, name: "b_$(var v)"}
- group:
    scoped: "false"
    children:
    - push-ros-namespace: {namespace: leaked}
    - let: {name: v, value: leaked}
- group:
    scoped: false
    children:
    - set_env: {name: GRADE_LEAKED, value: "yes"}
- node: {pkg: demo, exec: talker, name: "c_$(var v)"}
""",
    )
    a, b, c = plan(launch, tmp_path).processes
    assert a.node_name == "/scoped_ns/a_inner"
    assert a.env["GRADE_SCOPED"] == "1"
    assert b.cmd[-2:] == ("-r", "__node:=b_outer")  # nothing leaked from the scoped group
    assert "GRADE_SCOPED" not in b.env
    assert c.node_name == "/leaked/c_leaked"
    assert c.env["GRADE_LEAKED"] == "yes"


@pytest.mark.parametrize(
    ("value", "started"),
    [
        ("true", True),
        ("True", True),
        ("1", True),
        ("false", False),
        ("0", False),
    ],
)
def test_conditions(prefix: Path, tmp_path: Path, value: str, started: bool) -> None:
    launch = write(
        tmp_path / "x.launch.yaml",
        """\
launch:
- arg: {name: enabled, default: "true"}
- node: {pkg: demo, exec: talker, name: with_if, if: "$(var enabled)"}
- node: {pkg: demo, exec: talker, name: with_unless, unless: "$(var enabled)"}
- group:
    if: "$(var enabled)"
    children:
    - node: {pkg: demo, exec: talker, name: in_group}
""",
    )
    names = [
        p.node_name or p.label.rsplit("-", 1)[0]
        for p in plan(launch, tmp_path, {"enabled": value}).processes
    ]
    assert names == (["with_if", "in_group"] if started else ["with_unless"])


def test_command_line_argument_wins_over_default(prefix: Path, tmp_path: Path) -> None:
    launch = write(
        tmp_path / "x.launch.yaml",
        """\
launch:
- arg: {name: who, default: bob}
- node: {pkg: demo, exec: talker, name: "$(var who)"}
""",
    )
    assert plan(launch, tmp_path).processes[0].label == "bob-1"
    assert plan(launch, tmp_path, {"who": "carol"}).processes[0].label == "carol-1"


def test_set_env_reaches_process_and_env_substitution(prefix: Path, tmp_path: Path) -> None:
    launch = write(
        tmp_path / "x.launch.yaml",
        """\
launch:
- set_env: {name: GRADE_A, value: "from-launch"}
- node: {pkg: demo, exec: talker, args: "$(env GRADE_A) $(env GRADE_B b-default)"}
""",
    )
    (process,) = plan(launch, tmp_path).processes
    assert process.cmd[1:3] == ("from-launch", "b-default")
    assert process.env["GRADE_A"] == "from-launch"


# ------------------------------------------------------------------------------ error paths

ERROR_CASES = [
    # (file body, line of the error, message)
    (
        "launch:\n- node: {pkg: demo, exec: talker}\n- timer: {period: '1'}\n",
        3,
        r"unknown tag 'timer'; supported: arg, group",
    ),
    (
        "launch:\n- node:\n    pkg: demo\n    exec: talker\n    respawn: 'true'\n",
        5,
        r"unknown attribute 'respawn' of 'node'; supported: args, exec",
    ),
    (
        'launch:\n- node:\n    pkg: demo\n    exec: talker\n    args: "$(optenv X)"\n',
        5,
        r"unknown substitution '\$\(optenv \.\.\.\)'",
    ),
    ("launch:\n- arg: {name: a, choices: [x]}\n", 2, r"unknown attribute 'choices' of 'arg'"),
    (
        "launch:\n- arg: {name: n, default: 5}\n",
        2,
        r"attribute 'default' of 'arg' must be a string, got '5'; quote it",
    ),
    (
        "launch:\n- node: {pkg: demo, exec: talker, if: 'true', unless: 'false'}\n",
        2,
        "has both 'if' and 'unless'",
    ),
    ("launch:\n- group: {scoped: 'true'}\n", 2, "'group' needs the attribute 'children'"),
    (
        "launch:\n- node: {pkg: demo, exec: talker, on_exit: restart}\n",
        2,
        "'on_exit' of 'node' must be 'shutdown', got 'restart'",
    ),
    (
        "launch:\n- node:\n    pkg: demo\n    exec: talker\n    param:\n    - {name: a, from: b}\n",
        6,
        "'name' and 'from' of a node param are mutually exclusive",
    ),
    (
        "launch:\n- node:\n    pkg: demo\n    exec: talker\n    remap:\n    - {from: a, too: b}\n",
        6,
        "unknown attribute 'too' of 'node.remap'",
    ),
    ("launch:\n- node: {pkg: demo}\n", 2, "'node' needs the attribute 'exec'"),
    ("nodes:\n- node: {pkg: demo}\n", 1, "single key 'launch:'"),
    (
        "launch:\n- node: {pkg: demo, exec: talker}\n  arg: {name: x}\n",
        2,
        "each action is a mapping with one key",
    ),
    (
        "launch:\n- node: {pkg: demo, exec: [talker]}\n",
        2,
        "attribute 'exec' of 'node' must be a string",
    ),
    ("launch:\n  - node: {pkg: demo\n", 3, "invalid YAML"),
]


@pytest.mark.parametrize(
    ("body", "line", "message"), ERROR_CASES, ids=[c[2][:40] for c in ERROR_CASES]
)
def test_parse_errors_name_file_and_line(
    tmp_path: Path, body: str, line: int, message: str
) -> None:
    launch = write(tmp_path / "bad.launch.yaml", body)
    with pytest.raises(LaunchFileError, match=where(launch, line) + ".*" + message):
        check_launch_file(launch)


RUNTIME_ERROR_CASES = [
    (
        "launch:\n- arg: {name: x}\n- arg: {name: needed, description: the thing}\n",
        {"x": "1"},
        3,
        r"required launch argument 'needed' \(description: 'the thing'\) was not provided",
    ),
    (
        "launch:\n- arg: {name: c, default: 'yes'}\n- node: {pkg: demo, exec: talker, "
        'if: "$(var c)"}\n',
        {},
        3,
        "condition 'if' evaluated to 'yes'; expected one of true, false, 1, 0",
    ),
    (
        "launch:\n- node: {pkg: demo, exec: talker, unless: 'maybe'}\n",
        {},
        2,
        "condition 'unless' evaluated to 'maybe'",
    ),
    (
        "launch:\n- include: {file: /nonexistent/x.launch.yaml}\n",
        {},
        2,
        "included launch file '/nonexistent/x.launch.yaml' not found",
    ),
    (
        "launch:\n- node: {pkg: demo, exec: nope}\n",
        {},
        2,
        "executable 'nope' not found in the libexec directory",
    ),
    (
        "launch:\n- node: {pkg: no_such_pkg, exec: talker}\n",
        {},
        2,
        "package 'no_such_pkg' not found",
    ),
    (
        'launch:\n- node:\n    pkg: demo\n    exec: talker\n    args: "$(var undefined)"\n',
        {},
        2,
        "launch configuration 'undefined' does not exist",
    ),
    (
        "launch:\n- node: {pkg: demo, exec: talker, output: file}\n",
        {},
        2,
        "output 'file' is not supported",
    ),
    (
        "launch:\n- node: {pkg: demo, exec: talker, name: 'bad-name'}\n",
        {},
        2,
        "invalid node name 'bad-name'",
    ),
    (
        "launch:\n- node:\n    pkg: demo\n    exec: talker\n    param:\n    - {from: /no/p.yaml}\n",
        {},
        6,
        "parameter file '/no/p.yaml' not found",
    ),
    (
        "launch:\n- group:\n    scoped: 'perhaps'\n    children: []\n",
        {},
        2,
        "'scoped' of 'group' must be true or false",
    ),
]


@pytest.mark.parametrize(
    ("body", "args", "line", "message"),
    RUNTIME_ERROR_CASES,
    ids=[c[3][:40] for c in RUNTIME_ERROR_CASES],
)
def test_runtime_errors_name_file_and_line(
    prefix: Path, tmp_path: Path, body: str, args: dict[str, str], line: int, message: str
) -> None:
    launch = write(tmp_path / "bad.launch.yaml", body)
    with pytest.raises(LaunchFileError, match=where(launch, line) + ".*" + message):
        plan(launch, tmp_path, args)


def test_include_missing_required_argument(prefix: Path, tmp_path: Path) -> None:
    inner = write(
        tmp_path / "inner.launch.yaml",
        "launch:\n- arg: {name: who, description: whom}\n- arg: {name: o, default: x}\n",
    )
    launch = write(
        tmp_path / "outer.launch.yaml",
        f"launch:\n- include:\n    file: {inner}\n    arg:\n    - {{name: o, value: y}}\n",
    )
    with pytest.raises(
        LaunchFileError,
        match=where(launch, 2) + ".*missing required argument 'who' "
        r"\(description: 'whom'\), given: \[o\]",
    ):
        plan(launch, tmp_path, {"who": "cli-does-not-count"})


def test_error_inside_included_file_names_that_file(prefix: Path, tmp_path: Path) -> None:
    inner = write(
        tmp_path / "inner.launch.yaml", "launch:\n- node: {pkg: demo, exec: talker}\n- bogus: {}\n"
    )
    launch = write(tmp_path / "outer.launch.yaml", f"launch:\n- include: {{file: {inner}}}\n")
    with pytest.raises(LaunchFileError, match=where(inner, 3) + "unknown tag 'bogus'"):
        plan(launch, tmp_path)


# ------------------------------------------------------------------------------ CLI


def test_cli_check_reports_each_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(
        tmp_path / "good.launch.yaml",
        "launch:\n- arg: {name: a, default: '1'}\n- node: {pkg: demo, exec: t}\n",
    )
    bad = write(tmp_path / "bad.launch.yaml", "launch:\n- nodee: {pkg: demo}\n")
    assert launch_main(["--check", str(good)]) == 0
    assert "1 nodes, 0 includes, arguments: a" in capsys.readouterr().out
    assert launch_main(["--check", str(good), str(bad)]) == 1
    assert f"{bad}:2: unknown tag 'nodee'" in capsys.readouterr().err


def test_cli_print_and_package_lookup(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        prefix / "share/demo/launch/one.launch.yaml",
        "launch:\n- arg: {name: who, default: a}\n- node: {pkg: demo, exec: talker, "
        'name: "$(var who)"}\n',
    )
    assert launch_main(["--print", "demo", "one.launch.yaml", "who:=zed"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"[zed-1] {prefix}/lib/demo/talker --ros-args -r __node:=zed"
    )
    with pytest.raises(LaunchFileError, match=r"launch file 'two\.launch\.yaml' of package 'demo'"):
        launch_main(["--print", "demo", "two.launch.yaml"])


def test_cli_warns_about_an_undeclared_argument(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch = write(
        tmp_path / "one.launch.yaml",
        "launch:\n- arg: {name: who, default: a}\n- arg: {name: rate, default: '1'}\n"
        "- node: {pkg: demo, exec: talker}\n",
    )
    write(prefix / "share/demo/launch/unused.launch.yaml", "launch: []\n")
    assert launch_main(["--print", str(launch), "who:=b", "lockstep:=true"]) == 0
    err = capsys.readouterr().err
    assert (
        "grade launch: warning: one.launch.yaml does not declare launch argument(s) lockstep "
        "(ignored); declared: who, rate"
    ) in err
    assert launch_main(["--print", str(launch), "who:=b"]) == 0
    assert "warning" not in capsys.readouterr().err
