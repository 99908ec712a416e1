"""Entry point: `python -m kernelsmith_worker` (protocol on KS_PROTO_IN / KS_PROTO_OUT)."""

import os
import sys

# The audit's CPU-only torch.profiler sessions make kineto warn, on every evaluation, that
# CUPTI is taken (the worker's kernel log holds it): expected, so kineto says errors only.
# Set before torch is imported: kineto reads it when it initializes.
os.environ.setdefault("KINETO_LOG_LEVEL", "4")

from kernelsmith_worker.loop import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
