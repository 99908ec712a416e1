"""Convert a dataset written by `kernelsmith export` (JSON lines) to Parquet.

verl reads its training and validation files as Parquet. Usage:

    python3 -m kernelsmith_worker.jsonl_to_parquet IN.jsonl OUT.parquet

Needs pyarrow (`pip install pyarrow`; `pip install datasets` pulls it too). Exit status: 0
written, 1 the input is unreadable or not JSON lines, 2 usage error or pyarrow missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

USAGE = "usage: python3 -m kernelsmith_worker.jsonl_to_parquet IN.jsonl OUT.parquet"


class ConversionError(Exception):
    """The input cannot be converted; the message names the file and line."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of `path`, one per non-blank line."""
    rows: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ConversionError(f"{path}:{number}: not valid JSON: {e}") from None
                if not isinstance(row, dict):
                    raise ConversionError(f"{path}:{number}: expected a JSON object per line")
                rows.append(row)
    except OSError as e:
        raise ConversionError(f"cannot read {path}: {e.strerror}") from None
    if not rows:
        raise ConversionError(f"{path}: no rows (is it the output of `kernelsmith export`?)")
    return rows


def convert(src: Path, dst: Path) -> int:
    """Writes the rows of `src` to `dst` as Parquet and returns how many there were.

    Raises ImportError when pyarrow is missing and ConversionError for a bad input.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = read_jsonl(src)
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise ConversionError(f"{src}: rows do not share one schema: {e}") from None
    pq.write_table(table, dst)
    return table.num_rows


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        n = convert(Path(argv[0]), Path(argv[1]))
    except ImportError:
        print(
            "jsonl_to_parquet: error: pyarrow is not installed; install it with "
            "`python3 -m pip install pyarrow` (or `pip install datasets`, which pulls it)",
            file=sys.stderr,
        )
        return 2
    except ConversionError as e:
        print(f"jsonl_to_parquet: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {n} row(s) to {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
