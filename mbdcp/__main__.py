"""Command line: ``python -m mbdcp demo [NAME] [--json] [--list] [--no-plot]``."""
import argparse
import json
import sys

from mbdcp.tools.demos import DEMOS


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
        for name, fn in DEMOS.items():
            print(f"{name:10s} {fn.__doc__.splitlines()[0]}")
        return 0
    if args.name not in DEMOS:
        parser.error(f"unknown demo {args.name!r}; choose from {', '.join(DEMOS)}")
    summary = DEMOS[args.name](print, plot=not args.no_plot)
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
