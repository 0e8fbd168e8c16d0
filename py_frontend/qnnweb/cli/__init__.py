"""The ``qnnweb`` command (also ``python -m qnnweb``): compile, describe, run, time and check a model
from a shell. One module per subcommand, each with ``add_parser(subparsers)``; errors end as one line
on stderr and an exit code: 0 done, 1 usage (a bad flag, a missing optional package), 2 the model or
an input file is bad (qnnweb.ModelError, unreadable files)."""

import argparse
import sys

from ..errors import UnsupportedModelError
from ..version import package_version
from . import bench, check, compile, info, profile, run
from .errors import InputFileError, UsageError

COMMANDS = [compile, info, run, profile, bench, check]


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on a bad command line; here 2 means a bad model, so usage errors exit 1."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(UsageError.exit_code, f"{self.prog}: error: {message}\n")


def build_parser():
    parser = Parser(prog="qnnweb", description="int8 neural-network inference on WebAssembly: "
                    "compile, describe, run, time and check TFLite / ONNX / .qnn models.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def one_line(error):
    """A model's problems on one line: ``UnsupportedModelError`` lists them one per line."""
    if isinstance(error, UnsupportedModelError) and len(error.problems) > 1:
        problems = "; ".join(f"op {index} {op_type}: {reason}" for index, op_type, reason in error.problems)
        return f"{len(error.problems)} unsupported operators or data types: {problems}"
    return " ".join(line.strip() for line in str(error).splitlines())


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (UsageError, InputFileError) as error:
        print(f"qnnweb {args.command}: error: {error}", file=sys.stderr)
        return error.exit_code
    except ValueError as error:  # qnnweb.ModelError and every other "the model or input is wrong"
        print(f"qnnweb {args.command}: {args.model}: {one_line(error)}", file=sys.stderr)
        return 2
    return 0
