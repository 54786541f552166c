"""Spinning a node until SIGINT/SIGTERM without exceptions thrown into native code.

rclpy's default handler turns a signal into KeyboardInterrupt wherever Python happens to be, also
inside a pybind11 call such as taking a message; that surfaces as unrelated errors ("Unable to
convert call argument") and a non-zero exit. Here a signal only sets a flag that the spin loop
checks between callbacks, so every node shuts down the same clean way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Protocol

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from grade_common.signals import stop_flag

SPIN_PERIOD_S = 0.1


def init(args: list[str] | None = None) -> None:
    """rclpy.init without rclpy's signal handlers (use `spin_until_signal`)."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)


def spin_until_signal(node: Node) -> None:
    """Spin `node` until SIGINT/SIGTERM or until its context shuts down."""
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        with stop_flag() as stop:
            while not stop.is_set() and node.context.ok():
                executor.spin_once(timeout_sec=SPIN_PERIOD_S)
    except ExternalShutdownException:
        pass
    finally:
        executor.remove_node(node)
        executor.shutdown(timeout_sec=1.0)


class NodeMain(Protocol):
    """A node module's `main(args)`: rclpy arguments in, exit code out."""

    def __call__(self, args: list[str] | None = None) -> int: ...


def node_main(
    name: str,
    factory: Callable[[], Node],
    *,
    config_errors: tuple[type[Exception], ...] = (),
    config_error_what: str = "invalid parameters",
    config_error_code: int = 2,
) -> NodeMain:
    """The `main(args)` entry point of a node module (`ros2 run grade NAME`, `python -m ...`):
    `run_node` with these settings."""

    def main(args: list[str] | None = None) -> int:
        return run_node(
            name,
            factory,
            args,
            config_errors=config_errors,
            config_error_what=config_error_what,
            config_error_code=config_error_code,
        )

    main.__doc__ = f"Entry point of the {name} node: init, spin until SIGINT/SIGTERM, clean up."
    return main


def run_node(
    name: str,
    factory: Callable[[], Node],
    args: list[str] | None = None,
    *,
    config_errors: tuple[type[Exception], ...] = (),
    config_error_what: str = "invalid parameters",
    config_error_code: int = 2,
) -> int:
    """The whole life of a simple node: init, build, spin until a signal, clean up.

    Returns the exit code: 0 after a clean stop; `config_error_code` when rcl cannot start (e.g.
    an unparsable parameters file) or the node rejects its configuration (`config_errors`), with
    the reason printed as `<name>: <what>: <reason>`.
    """
    try:
        init(args)
    except RuntimeError as err:  # rcl's RCLError, e.g. a parameters file it cannot parse
        print(f"{name}: cannot start: {err}", file=sys.stderr)
        return config_error_code
    node: Node | None = None
    try:
        node = factory()
        spin_until_signal(node)
    except config_errors as err:
        print(f"{name}: {config_error_what}: {err}", file=sys.stderr)
        return config_error_code
    except KeyboardInterrupt:  # a signal before the flag handler was installed
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
