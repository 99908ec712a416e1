#!/usr/bin/env python3
"""Scripted fake evaluation worker for the engine's C++ tests (standard library only).

Speaks protocol version 1 (docs/protocol.md) on the fds named by KS_PROTO_IN / KS_PROTO_OUT.
What it does for a request is scripted by the request's candidate source, a JSON object:

  mode          "ok" (default), "crash" (SIGSEGV after the correctness stage message),
                "exit" (os._exit(3)), "hang" (sleeps forever in `hang_stage`), "garbage"
                (writes a non-JSON protocol line), "wrong_id", "close" (closes its protocol
                output and sleeps), "poison" (ok result with worker_poisoned), "malformed"
                (result without a status), "exit_after_result" (ok result, then
                os._exit(0) at once), "spam" (prints `spam_mb` MiB to stdout and
                stderr, then an ok result)
  status        result status to report (default "ok")
  speedup       result speedup (default 1.0)
  timing_sleep  seconds to hold the lease in the timing stage (default 0)
  hang_stage    stage to hang in (default "correctness")
  child_pid_file  for "hang": spawn a sleeping child first and write its pid here
  print         text printed to stdout and stderr during the request
  replace_file  a path: first put a new file in its place (written aside, renamed over it)

Environment:
  FAKE_SLOW_HELLO_FILE  if this file exists: delete it, then sleep 30 s before hello
  FAKE_PROTOCOL         protocol version announced in hello (default 1)
  FAKE_LEASE_LOG_DIR    write "<acquired> <released>" (time.time()) per timed request to
                        <dir>/<pid>-<id>.log
"""

import json
import os
import signal
import subprocess
import sys
import time

PROTO_IN = os.fdopen(int(os.environ["KS_PROTO_IN"]), "rb")
PROTO_OUT_FD = int(os.environ["KS_PROTO_OUT"])


def send(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(PROTO_OUT_FD, data)
        data = data[n:]


def send_raw(text):
    os.write(PROTO_OUT_FD, text.encode())


def receive():
    line = PROTO_IN.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def info():
    return {
        "kind": "cpu",
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "tmpdir": os.environ.get("TMPDIR"),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "pythonpath": os.environ.get("PYTHONPATH"),
    }


def hang_forever():
    while True:
        time.sleep(1000)


def evaluate(req):
    rid = req["id"]
    script = json.loads(req["candidate"]["source"] or "{}") or {}
    mode = script.get("mode", "ok")
    if script.get("replace_file"):
        with open(script["replace_file"] + ".new", "w") as f:
            f.write("planted")
        os.replace(script["replace_file"] + ".new", script["replace_file"])
    if script.get("print"):
        print(script["print"])
        print(script["print"], file=sys.stderr)
    if mode == "garbage":
        send_raw("this is not json {\n")
        hang_forever()
    if mode == "wrong_id":
        send({"type": "stage", "id": rid + "x", "stage": "load"})
        hang_forever()
    if mode == "close":
        os.close(PROTO_OUT_FD)
        hang_forever()
    for stage in ("load", "correctness", "audit"):
        send({"type": "stage", "id": rid, "stage": stage})
        if mode == "hang" and script.get("hang_stage", "correctness") == stage:
            if script.get("child_pid_file"):
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
                with open(script["child_pid_file"], "w") as f:
                    f.write(str(child.pid))
            hang_forever()
        if stage == "correctness" and mode == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if stage == "correctness" and mode == "exit":
            sys.stdout.flush()
            os._exit(3)
    if mode == "spam":
        chunk = b"o" * (1 << 20)
        for _ in range(int(script.get("spam_mb", 1))):
            os.write(1, chunk)
            os.write(2, chunk.replace(b"o", b"e"))
        os.write(1, b"END-OF-STDOUT\n")
        os.write(2, b"END-OF-STDERR\n")
    if req.get("timing", True):
        send({"type": "lease", "id": rid, "op": "acquire"})
        granted = receive()
        assert granted == {"type": "lease_granted", "id": rid}, granted
        acquired = time.time()
        send({"type": "stage", "id": rid, "stage": "timing"})
        if mode == "hang" and script.get("hang_stage") == "timing":
            hang_forever()
        time.sleep(float(script.get("timing_sleep", 0)))
        released = time.time()
        send({"type": "lease", "id": rid, "op": "release"})
        log_dir = os.environ.get("FAKE_LEASE_LOG_DIR")
        if log_dir:
            with open(os.path.join(log_dir, "%d-%s.log" % (os.getpid(), rid)), "w") as f:
                f.write("%.6f %.6f\n" % (acquired, released))
    result = {
        "status": script.get("status", "ok"),
        "message": "echo: " + req["backend"],
        "speedup": script.get("speedup", 1.0),
        "device": info(),
    }
    if mode == "malformed":
        del result["status"]
    send({"type": "result", "id": rid, "result": result, "worker_poisoned": mode == "poison"})
    if mode == "exit_after_result":
        os._exit(0)


def main():
    slow = os.environ.get("FAKE_SLOW_HELLO_FILE")
    if slow and os.path.exists(slow):
        os.unlink(slow)
        time.sleep(30)
    send({"type": "hello", "protocol": int(os.environ.get("FAKE_PROTOCOL", "1")),
          "worker_version": "fake", "pid": os.getpid(), "device": info(),
          "backends": ["cpu"]})
    while True:
        msg = receive()
        if msg["type"] == "shutdown":
            sys.exit(0)
        evaluate(msg)


if __name__ == "__main__":
    main()
