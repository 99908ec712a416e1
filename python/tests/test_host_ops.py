"""The audit's CPU profile of forward (gpu_profile.host_ops_of): torch ops in every thread."""
import threading

import torch

from kernelsmith_worker.gpu_profile import host_op_findings, host_ops_of


def test_torch_ops_in_a_thread_started_and_joined_inside_the_call_are_seen():
    x = torch.rand(64, 64)

    def forward():  # r11_c03's shape: the work in a thread the call joins
        out = [None]
        t = threading.Thread(target=lambda: out.__setitem__(0, torch.softmax(x, 1)))
        t.start()
        t.join()
        return out[0]

    assert host_ops_of(forward).host_ops == {}  # the calling thread's only
    prof = host_ops_of(forward, all_threads=True)
    assert prof.host_ops.get("aten._softmax") == 1
    assert [f["kind"] for f in host_op_findings(prof)] == ["torch_compute"]
    assert host_op_findings(host_ops_of(lambda: torch.empty(4).fill_(1.0), all_threads=True)) == []
