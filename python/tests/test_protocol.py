"""Protocol framing on real pipes."""

from __future__ import annotations

import json
import os

from kernelsmith_worker.protocol import Channel, to_json_safe


def test_to_json_safe():
    obj = {"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5], "c": (1, 2),
           "d": __import__("torch").tensor(3.0)}
    safe = to_json_safe(obj)
    assert safe == {"a": "nan", "b": ["inf", "-inf", 1.5], "c": [1, 2], "d": 3.0}
    json.dumps(safe, allow_nan=False)


def test_channel_roundtrip_and_junk_lines():
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    ch = Channel(r_in, w_out)
    with os.fdopen(w_in, "w") as engine:
        engine.write("not json\n\n[1, 2]\n{\"type\": \"eval\", \"id\": \"1\"}\n")
    assert ch.receive() == {"type": "eval", "id": "1"}
    assert ch.receive() is None  # EOF
    ch.send({"type": "stage", "id": "1", "stage": "load", "x": float("nan")})
    os.close(w_out)
    with os.fdopen(r_out) as engine:
        line = engine.readline()
    assert line.endswith("\n")
    assert json.loads(line) == {"type": "stage", "id": "1", "stage": "load", "x": "nan"}
