"""`grade bench [NAME ...]`: the project's benchmarks, each one documented command away.

Benchmarks print their measurements; none of them is a test and none asserts on time.
`grade bench NAME --help` lists the options of benchmark NAME.
"""

from __future__ import annotations

import argparse
import contextlib
import io

from grade_cli.benchmarks import BENCHMARKS, OPERAND_BENCHMARKS, load_benchmark


def build_parser() -> argparse.ArgumentParser:
    """The `grade bench` argument parser; options it does not know go on to every benchmark."""
    parser = argparse.ArgumentParser(prog="grade bench", description=__doc__)
    parser.add_argument(
        "names", nargs="*", help=f"benchmarks to run (default all): {sorted(BENCHMARKS)}"
    )
    return parser


def run(args: argparse.Namespace, bench_argv: list[str]) -> int:
    """Run the named benchmarks (default: all) in a fixed order, each with bench_argv (the
    options `grade bench` does not know); stop at the first failure."""
    for name in args.names or sorted(set(BENCHMARKS) - set(OPERAND_BENCHMARKS)):
        bench = load_benchmark(name)
        print(f"== benchmark {name}")
        code = bench.main(bench_argv)
        if code:
            return code
    return 0


HELP_FLAGS = ("-h", "--help")


def benchmark_help(name: str) -> str:
    """The `--help` text of benchmark `name`: what `grade bench NAME --help` prints.

    Raises:
        KeyError: no benchmark has that name.
    """
    out = io.StringIO()
    # Every benchmark parses its options first (argparse prints the help and exits on -h),
    # so asking for help never starts a measurement.
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        load_benchmark(name).main(["--help"])
    return out.getvalue()


def main(argv: list[str]) -> int:
    """Run `grade bench` with argv; return the exit code."""
    parser = build_parser()
    named = [a for a in argv if not a.startswith("-")]
    if any(a in HELP_FLAGS for a in argv) and named and named[0] in BENCHMARKS:
        # `grade bench slam --help`: the options of slam (and of each further name), not the
        # generic help of `grade bench`; only the leading names are benchmarks.
        for name in named:
            if name not in BENCHMARKS:
                break
            print(benchmark_help(name), end="")
        return 0
    if argv and argv[0] in OPERAND_BENCHMARKS:
        return run(argparse.Namespace(names=[argv[0]]), argv[1:])
    args, bench_argv = parser.parse_known_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {sorted(BENCHMARKS)}")
    return run(args, bench_argv)
