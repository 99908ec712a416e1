"""TEST ONLY: a stand-in for python/kernelsmith_curate at the CurateTool seam.

extract: every line "#fake {json}" of a file becomes a record (defaults filled in); a file
         containing "#crash" makes the whole call exit 1.
inputs:  ok unless the source contains NEEDS_LLM (rejected with a last_error; an answer whose
         get_inputs mentions "good" passes) or CRASH_INPUTS (the call exits 1).
cluster: one cluster of every record, the first one central.
Each call appends "<subcommand> <what>" to $FAKE_CURATE_LOG when it is set.
"""
import json
import os
import sys


def log(text):
    path = os.environ.get("FAKE_CURATE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")


def extract(argv):
    root = argv[argv.index("--root") + 1]
    files = [a for a in argv[argv.index("--root") + 2:]]
    log("extract " + " ".join(os.path.relpath(f, root) for f in files))
    for path in files:
        text = open(path).read()
        if "#crash" in text:
            sys.exit(1)
        for n, line in enumerate(text.splitlines(), 1):
            if not line.startswith("#fake "):
                continue
            rec = json.loads(line[len("#fake "):])
            base = {"file": os.path.relpath(path, root), "repo": os.path.basename(root),
                    "class": "M", "line": n, "license": None, "status": "ok", "reason": None,
                    "source": "import torch\nclass %s(torch.nn.Module):\n    pass  # %s\n"
                              % (rec.get("class", "M"), rec.get("note", "")),
                    "ast_hash": "h%d" % n, "ops": ["relu"], "family": "activation"}
            base.update(rec)
            base.setdefault("tokens", base["source"].split())
            print(json.dumps(base))


def inputs():
    ids = []
    for line in sys.stdin:
        rec = json.loads(line)
        ids.append(rec["id"])
        src, cand = rec["source"], rec.get("candidate_inputs")
        if "CRASH_INPUTS" in src:
            sys.exit(1)
        ok = "NEEDS_LLM" not in src or (cand is not None and "good" in cand["get_inputs"])
        print(json.dumps({
            "id": rec["id"], "status": "ok" if ok else "rejected",
            "reason": None if ok else "could not deduce inputs",
            "problem": (src + "\nclass Model(%s):\n    pass\n" % rec["class"]
                        + (cand["get_inputs"] if cand else "def get_inputs():\n    return []\n")
                        + "def get_init_inputs():\n    return []\n") if ok else None,
            "runtime_us": 12.5 if ok else None, "attempts": 1,
            "last_error": None if ok else "RuntimeError: mat1 and mat2 shapes cannot be multiplied"}))
    log("inputs " + " ".join(ids))


def cluster():
    recs = [json.loads(line) for line in sys.stdin]
    log("cluster %d" % len(recs))
    ids = [r["id"] for r in recs]
    print(json.dumps({"method": "tfidf+hdbscan",
                      "clusters": [{"id": 0, "members": ids, "central": ids[0]}] if ids else [],
                      "noise": []}))


def main():
    argv = sys.argv[1:]
    if argv == ["--help"]:
        print("usage: fake_curate {extract,inputs,cluster}")
        return
    {"extract": lambda: extract(argv), "inputs": inputs, "cluster": cluster}[argv[0]]()


main()
