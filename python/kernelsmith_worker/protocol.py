"""The worker side of the JSON-lines protocol (docs/protocol.md).

The protocol runs on two dedicated file descriptors named by KS_PROTO_IN / KS_PROTO_OUT
(default 3 and 4). `Channel.from_env` moves them to high, close-on-exec descriptors and
closes the originals, so neither candidate output (stdout/stderr) nor a child process
(compilers) can write into the protocol by accident.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import sys
from typing import Any

DEFAULT_IN_FD = 3
DEFAULT_OUT_FD = 4
_HIGH_FD = 200  # first descriptor number the protocol fds are moved to


class ProtocolError(Exception):
    """The protocol stream cannot be used (bad descriptor, broken pipe)."""


class EngineGone(Exception):
    """The engine closed the protocol or asked for shutdown while the worker waited on it."""


def to_json_safe(obj: Any) -> Any:
    """Returns obj with only JSON-representable values.

    Non-finite floats become the strings "nan", "inf", "-inf" (strict JSON has no NaN);
    tuples become lists; numpy/torch scalars become Python numbers; anything else unknown
    becomes its str().
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): to_json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json_safe(v) for v in obj]
    item = getattr(obj, "item", None)  # numpy / torch scalars
    if callable(item):
        try:
            return to_json_safe(item())
        except Exception:
            pass
    return str(obj)


def _move_high(fd: int) -> int:
    """Duplicates fd to a close-on-exec descriptor >= _HIGH_FD and closes fd."""
    try:
        new_fd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD)
    except OSError as e:
        raise ProtocolError(
            f"protocol descriptor {fd} is not open ({e}); the engine passes it through "
            "KS_PROTO_IN/KS_PROTO_OUT"
        ) from e
    os.close(fd)
    return new_fd


class Channel:
    """One reader and one writer of protocol lines. Not thread-safe (the loop is serial)."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self._in = os.fdopen(in_fd, "rb")
        self._out = os.fdopen(out_fd, "wb")

    @classmethod
    def from_env(cls) -> Channel:
        """Opens the descriptors named by KS_PROTO_IN / KS_PROTO_OUT (defaults 3 / 4)."""
        try:
            in_fd = int(os.environ.get("KS_PROTO_IN", DEFAULT_IN_FD))
            out_fd = int(os.environ.get("KS_PROTO_OUT", DEFAULT_OUT_FD))
        except ValueError as e:
            raise ProtocolError(f"KS_PROTO_IN/KS_PROTO_OUT must be integers: {e}") from e
        if in_fd == out_fd:
            raise ProtocolError(f"KS_PROTO_IN and KS_PROTO_OUT are the same descriptor ({in_fd})")
        return cls(_move_high(in_fd), _move_high(out_fd))

    def send(self, msg: dict[str, Any]) -> None:
        """Writes msg as one JSON line. Raises ProtocolError if the engine went away."""
        line = json.dumps(to_json_safe(msg), allow_nan=False, separators=(",", ":"))
        data = (line + "\n").encode()
        try:
            self._out.write(data)
            self._out.flush()
        except (OSError, ValueError) as e:
            raise ProtocolError(f"cannot write to the protocol descriptor: {e}") from e

    def receive(self) -> dict[str, Any] | None:
        """Returns the next message, or None at EOF. Lines that are not JSON objects are
        reported on stderr and skipped."""
        while True:
            try:
                line = self._in.readline()
            except OSError as e:
                raise ProtocolError(f"cannot read the protocol descriptor: {e}") from e
            if not line:
                return None
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError as e:
                print(f"kernelsmith_worker: ignoring a protocol line that is not JSON: {e}",
                      file=sys.stderr, flush=True)
                continue
            if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
                print("kernelsmith_worker: ignoring a protocol message without a \"type\"",
                      file=sys.stderr, flush=True)
                continue
            return msg
