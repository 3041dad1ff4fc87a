"""``python -m iosched sweep SPEC.toml --dask ADDRESS``: a sweep on a Dask cluster from the
command line; ``iosched sweep --dask`` calls it with ``--rows`` and makes the table itself.

Exit status as the CLI's: 2 for bad input, 1 for a run that failed.
"""

from __future__ import annotations

import argparse
import sys

from . import _iosched
from ._sweep import _source, sweep_rows
from .errors import InternalError, IoschedError, RunFailed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m iosched")
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("sweep", help="run a sweep spec's points on Dask")
    sweep.add_argument("spec", metavar="SPEC.toml")
    sweep.add_argument("--dask", metavar="ADDRESS", help="scheduler address (tcp://HOST:8786)")
    sweep.add_argument("--output-format", choices=["csv", "json"], default="csv")
    sweep.add_argument("--out", metavar="DIR", help="write sweep.csv, sweep.jsonl, the chart")
    sweep.add_argument("--rows", action="store_true", help="print raw rows (for iosched)")
    sweep.add_argument("--no-progress", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    progress = False if args.no_progress else None
    try:
        if args.dask:
            from distributed import Client

            with Client(args.dask) as client:
                rows = sweep_rows(args.spec, client=client, progress=progress)
        else:
            rows = sweep_rows(args.spec, progress=progress)
        if args.rows:
            sys.stdout.write("".join(row + "\n" for row in rows))
            return 0
        path, text = _source(args.spec)
        if args.out:
            _iosched.sweep_write_out(path, text, rows, args.out)
        sys.stdout.write(_iosched.sweep_table(path, text, rows, args.output_format))
    except (RunFailed, InternalError) as error:
        print(f"iosched: {error}", file=sys.stderr)
        return 1
    except IoschedError as error:
        print(f"iosched: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"iosched: --dask {args.dask}: {error}", file=sys.stderr)
        return 1
    return 0
