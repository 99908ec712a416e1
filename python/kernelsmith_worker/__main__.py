"""Entry point: `python -m kernelsmith_worker` (protocol on KS_PROTO_IN / KS_PROTO_OUT)."""

import sys

from kernelsmith_worker.loop import main

if __name__ == "__main__":
    sys.exit(main())
