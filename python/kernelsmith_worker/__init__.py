"""kernelsmith evaluation worker.

Loads a KernelBench-format problem and a candidate kernel, checks correctness, audits the
candidate for hacks, and times it against the reference. The engine starts it as
`python -m kernelsmith_worker` and talks to it over the JSON-lines protocol of
docs/protocol.md.
"""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
