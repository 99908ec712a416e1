"""`python3 -m kernelsmith_curate extract|inputs|cluster ...` (docs/curate-python.md).

Exit status: 0 when the input was processed (rejected records included), 2 on a usage or
infrastructure error, with the message on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO


def _write(records: Iterable[dict[str, Any]], out: TextIO) -> None:
    for rec in records:
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        out.flush()


def read_jsonl(stream: TextIO) -> Iterator[dict[str, Any]]:
    """Records of a JSON Lines stream. Raises ValueError naming the bad line."""
    for n, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"stdin line {n} is not JSON: {e}") from None
        if not isinstance(rec, dict):
            raise ValueError(f"stdin line {n} is not a JSON object")
        yield rec


def _cmd_extract(args: argparse.Namespace) -> int:
    from kernelsmith_curate.extract import extract_file
    from kernelsmith_curate.license import LicenseFinder
    from kernelsmith_curate.repo import Repo

    root = Path(args.root)
    if not root.is_dir():
        print(f"extract: --root {root} is not a directory", file=sys.stderr)
        return 2
    repo, licenses = Repo(root), LicenseFinder(root)
    for f in args.files:
        _write(extract_file(repo, licenses, Path(f)), sys.stdout)
    return 0


def _cmd_inputs(args: argparse.Namespace) -> int:
    from kernelsmith_curate.inputs import InputsOptions, run_inputs

    records = list(read_jsonl(sys.stdin))
    opts = InputsOptions(timeout_s=args.timeout, seed=args.seed, jobs=args.jobs)
    _write(run_inputs(records, opts), sys.stdout)
    return 0


def _cmd_cluster(args: argparse.Namespace) -> int:
    from kernelsmith_curate.cluster import cluster

    records = list(read_jsonl(sys.stdin))
    result = cluster(records, embed=args.embed, min_cluster_size=args.min_cluster_size)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m kernelsmith_curate")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract", help="nn.Module records of FILEs (JSON Lines on stdout)")
    e.add_argument("--root", required=True, help="repository root the files belong to")
    e.add_argument("files", nargs="*", metavar="FILE")
    e.set_defaults(fn=_cmd_extract)
    i = sub.add_parser("inputs", help="deduce inputs and run the execution filter")
    i.add_argument("--timeout", type=float, default=20.0, help="seconds per module (20)")
    i.add_argument("--seed", type=int, default=42, help="seed of construction and inputs (42)")
    i.add_argument("--jobs", type=int, default=1, help="modules run at once (1)")
    i.set_defaults(fn=_cmd_inputs)
    c = sub.add_parser("cluster", help="TF-IDF/MiniLM features + HDBSCAN (one JSON object)")
    c.add_argument("--embed", action="store_true", help="sentence embeddings when installed")
    c.add_argument("--min-cluster-size", type=int, default=5, help="HDBSCAN min_cluster_size")
    c.set_defaults(fn=_cmd_cluster)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except (ValueError, OSError) as e:
        print(f"{args.cmd}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
