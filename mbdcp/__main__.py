"""Command line: ``python -m mbdcp demo [NAME] [--json] [--list] [--no-plot]``."""
import argparse
import inspect
import json
import shutil
import sys
import textwrap

from mbdcp.tools.demos import DEMOS


def _description(fn):
    """The first paragraph of a demo's docstring, whole, on one line."""
    return " ".join(inspect.getdoc(fn).split("\n\n")[0].split())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mbdcp", description="mbdcp demos")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a demo (default: sphere)")
    demo.add_argument("name", nargs="?", default="sphere", help="demo name (see --list)")
    demo.add_argument("--json", action="store_true", help="print a one-line JSON summary last")
    demo.add_argument("--list", action="store_true", help="list the demos")
    demo.add_argument("--no-plot", action="store_true", help="do not write figures")
    args = parser.parse_args(argv)
    if args.list:
        width = max(40, min(shutil.get_terminal_size().columns, 100))
        for name, fn in DEMOS.items():
            print(textwrap.fill(_description(fn), width=width, initial_indent=f"{name:10s} ",
                                subsequent_indent=" " * 11, break_long_words=False, break_on_hyphens=False))
        return 0
    if args.name not in DEMOS:
        parser.error(f"unknown demo {args.name!r}; choose from {', '.join(DEMOS)}")
    summary = DEMOS[args.name](print, plot=not args.no_plot)
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
