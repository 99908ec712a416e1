import os, sys, time, importlib.util
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, "python")
import torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
prob = load(sys.argv[1], "prob"); cand = load(sys.argv[2], "cand")
args = prob.get_inputs(); model = cand.ModelNew(*prob.get_init_inputs())
model(*args)
t=time.perf_counter(); model(*args); print("plain", round(time.perf_counter()-t,3))
from kernelsmith_worker.gpu_profile import host_ops_of
t=time.perf_counter(); r = host_ops_of(lambda: model(*args), all_threads=True); print("host_ops_of", round(time.perf_counter()-t,3), sum(r.host_ops.values()))
from kernelsmith_worker.opclass import OpCounter
t=time.perf_counter()
with OpCounter(None) as c: model(*args)
print("opcounter", round(time.perf_counter()-t,3), sum(c.counts.values()))
