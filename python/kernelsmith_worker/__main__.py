"""Entry point: `python -m kernelsmith_worker` (protocol on KS_PROTO_IN / KS_PROTO_OUT)."""

import atexit
import os
import sys

from kernelsmith_worker.start_clock import StartClock

_clock = StartClock()
# The audit's CPU-only torch.profiler sessions make kineto warn, on every evaluation, that
# CUPTI is taken (the worker's kernel log holds it): expected, so kineto says errors only.
# Set before torch is imported: kineto reads it when it initializes.
os.environ.setdefault("KINETO_LOG_LEVEL", "4")

import torch  # noqa: E402,F401 - the largest part of start-up, timed on its own

_clock.mark("import torch")
from kernelsmith_worker.loop import main  # noqa: E402

_clock.mark("import worker modules")


def _exit(code: int) -> None:
    """Ends the process once main returned: exit handlers run and output is flushed, but the
    interpreter's teardown of torch's modules (about a second) is skipped: nothing the worker
    holds needs it, and the engine waits for the exit."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(main(_clock))
