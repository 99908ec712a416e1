"""The launch accounting of timed calls, from the kernel log: CUDA graph replays accounted
after timing, eager blocks accounted while they are timed; the evaluator's own kernels (input
refresh, L2 flush, checks) taken out by name and count."""
from collections import Counter

from kernelsmith_worker import timed_account
from kernelsmith_worker.kernel_log import KernelGroup
from kernelsmith_worker.timed_account import BlockAccount


class Log:
    def __init__(self):
        self.kernels = []


class FakeApi:
    """A kernel log: take_groups returns what was appended since the last take, summed per
    name and stream (an entry is a name on stream 7, or a (name, stream) pair; 1 us a
    launch); take_kernels per name ([name, us, launches])."""

    def __init__(self, log):
        self.log, self.taken = log, 0

    def take_groups(self, check="strict"):
        new, self.taken = self.log.kernels[self.taken:], len(self.log.kernels)
        keyed = Counter(k if isinstance(k, tuple) else (k, 7) for k in new)
        return [KernelGroup(n, s, c, float(c)) for (n, s), c in keyed.items()]

    def take_kernels(self, check="strict"):
        merged = Counter()
        for g in self.take_groups(check):
            merged[g.name] += g.count
        return [[n, float(c), c] for n, c in merged.items()]

    def kernels_of(self, call, check="strict"):
        self.take_kernels()
        call()
        return self.take_kernels()


class Inputs:
    def __init__(self, log):
        self.log, self.version = log, 0

    def refresh(self, signed=False):
        self.version += 1
        self.log.kernels += ["copy_kernel", "copy_kernel"]


class BatchingRunner:
    """Like a cheat that computes a whole sample in its first call when the input changed,
    unless the previous sample ended long ago (the gap before the profiler's first sample)."""
    calls_per_sample = 8

    def __init__(self, log, inputs):
        self.log, self.inputs, self.seen, self.first = log, inputs, None, True

    def flush(self):
        self.log.kernels.append("flush_kernel")

    def run(self, name):
        self.flush()
        if self.first:
            self.first = False
            self.log.kernels += ["mm_kernel"] * self.calls_per_sample
        elif self.seen != self.inputs.version:
            self.log.kernels.append("mm_kernel")
        self.seen = self.inputs.version


class HonestRunner(BatchingRunner):
    def run(self, name):
        self.flush()
        # the candidate itself uses the same copy kernel as the refresh: it stays counted
        self.log.kernels += ["mm_kernel", "copy_kernel"] * self.calls_per_sample


def _accounting(runner_type):
    from kernelsmith_worker.gpu_profile import timed_findings

    log = Log()
    inputs = Inputs(log)
    runner = runner_type(log, inputs)
    got = timed_account.timed_sample_kernels(FakeApi(log), runner, inputs)
    names = Counter({n: c for n, _, c in got["kernels"]})
    return got, names, timed_findings(got["kernels"], {"mm_kernel", "copy_kernel"},
                                      got["calls"], per_call=1)


def test_the_evaluators_kernels_are_taken_out_and_the_candidates_kept():
    got, names, found = _accounting(HonestRunner)
    samples = timed_account.ACCOUNTED_SAMPLES
    assert got["calls"] == samples * 8
    assert names["mm_kernel"] == samples * 8
    assert names["copy_kernel"] == samples * 8  # the candidate's own copies stay
    assert "flush_kernel" not in names
    assert found == []


def test_a_candidate_that_batches_after_the_first_accounted_sample_is_caught():
    got, names, found = _accounting(BatchingRunner)
    assert names["mm_kernel"] == 8 + timed_account.ACCOUNTED_SAMPLES - 1
    assert [f["kind"] for f in found] == ["timed_launch_deficit"]


def test_no_log_means_a_log_error():
    class NoLog(FakeApi):
        def kernels_of(self, call, check="strict"):
            call()
            return None

    log = Log()
    inputs = Inputs(log)
    got = timed_account.timed_sample_kernels(NoLog(log), HonestRunner(log, inputs), inputs)
    assert "log_error" in got


def test_a_log_that_misses_the_evaluators_own_kernels_was_not_recording():
    class Deaf(FakeApi):
        def kernels_of(self, call, check="strict"):
            got = super().kernels_of(call)
            return got if call.__name__ == "evaluator_part" else \
                [k for k in got if k[0] != "flush_kernel"]

    log = Log()
    inputs = Inputs(log)
    got = timed_account.timed_sample_kernels(Deaf(log), HonestRunner(log, inputs), inputs)
    assert "not recording" in got["log_error"]


def test_accounting_that_cannot_be_made_is_a_reject():
    from kernelsmith_worker.gpu_profile import accounting_findings

    raised = accounting_findings({"error": "RuntimeError: observed"}, per_call=1)
    assert [(f["kind"], f["severity"]) for f in raised] == [("timed_sample_failed", "reject")]
    deaf = accounting_findings({"log_error": "it was not recording"}, per_call=0)
    assert [(f["kind"], f["severity"]) for f in deaf] == [("accounting_failed", "reject")]
    missing = accounting_findings(None, per_call=2)
    assert [f["kind"] for f in missing] == ["accounting_failed"]
    assert accounting_findings(None, per_call=0) == []  # no accounting in the audit (CPU)
    assert accounting_findings({"kernels": [], "calls": 8}, per_call=1) == []


def test_a_sample_that_raises_while_accounted_is_reported():
    class Raising(HonestRunner):
        def run(self, name):
            raise RuntimeError("observed")

    log = Log()
    inputs = Inputs(log)
    got = timed_account.timed_sample_kernels(FakeApi(log), Raising(log, inputs), inputs)
    assert got == {"error": "RuntimeError: observed"}


# --- eager blocks: accounted while timed ---------------------------------------------------


def _eager_blocks(cand_kernels, ref_kernels=("gemm_ref",), reference=None, ref_extra=()):
    """Two blocks (ref, cand) of 3 samples of 2 calls as the timing stage runs them; the cand
    block has a check whose reference call runs aside. `reference`: the reference's names
    recorded before import; `ref_extra`: entries someone else adds to the ref block. Returns
    the account's result."""
    log = Log()
    inputs = Inputs(log)
    runner = HonestRunner(log, inputs)
    api = FakeApi(log)
    acct = BlockAccount(api, {"refresh": lambda: (inputs.refresh(False), runner.flush())},
                        reference)
    for name, kernels in (("ref", ref_kernels), ("cand", cand_kernels)):
        acct.open()
        if name == "ref":
            log.kernels += list(ref_extra)
        for s in range(3):
            inputs.refresh(False)
            runner.flush()
            for _ in range(2):
                log.kernels += list(kernels)
            if name == "cand" and s == 1:
                with acct.aside():
                    log.kernels += list(ref_kernels)  # the check's reference call
        acct.close(name == "cand", Counter({"refresh": 3}), 3 * 2)
    return acct.result()


def test_eager_blocks_keep_the_candidates_kernels_only():
    got = _eager_blocks(["mm_kernel", "copy_kernel"])
    kernels = {n: c for n, _, c in got["kernels"]}
    assert kernels == {"mm_kernel": 6, "copy_kernel": 6}  # refresh, flush, checks, ref: out
    assert got["calls"] == 6


def test_eager_blocks_show_library_work_done_while_timed():
    from kernelsmith_worker.gpu_profile import timed_findings

    got = _eager_blocks(["mm_kernel", "sm90_xmma_gemm_f32f32"])
    found = timed_findings(got["kernels"], {"mm_kernel"}, got["calls"], per_call=1)
    assert [f["kind"] for f in found] == ["foreign_compute"]


def test_eager_blocks_without_the_evaluators_kernels_are_a_log_error():
    log = Log()
    inputs = Inputs(log)
    runner = HonestRunner(log, inputs)
    acct = BlockAccount(FakeApi(log), {"refresh": lambda: (inputs.refresh(False),
                                                           runner.flush())})
    acct.open()
    log.kernels += ["mm_kernel"] * 4  # the refresh and flush went unrecorded
    acct.close(True, Counter({"refresh": 2}), 4)
    assert "not recording" in acct.result()["log_error"]


def test_counted_launches_split_between_candidate_and_foreign():
    from types import SimpleNamespace as NS

    from kernelsmith_worker.gpu_profile import classify_events

    ev = NS(name="sm90_xmma_gemm", device_resource_id=7, count=10,
            time_range=NS(elapsed_us=lambda: 100.0))
    # a Triton kernel named like a cuBLAS one: the hooks saw 4 launches, the log recorded 10
    prof = classify_events([ev], {"sm90_xmma_gemm"}, hooked={"sm90_xmma_gemm": 4})
    assert prof.custom_launches == 4 and prof.library == {"sm90_xmma_gemm": 6}
    assert abs(prof.custom_us - 40.0) < 1e-9 and abs(prof.foreign_us - 60.0) < 1e-9
    # a C++ kernel's name as CUPTI reports it, with its arguments: the candidate's own
    wmma = NS(name="wmma_tf32_gemm(float const*, float const*, float*, int, int, int)",
              device_resource_id=7, count=2, time_range=NS(elapsed_us=lambda: 50.0))
    prof = classify_events([wmma], {"wmma_tf32_gemm"})
    assert prof.custom_launches == 2 and prof.library == {}
    prof = classify_events([wmma], {"other_kernel"})
    assert prof.custom_launches == 0 and prof.library


def test_reference_blocks_with_only_the_references_and_evaluators_work_pass():
    got = _eager_blocks(["mm_kernel"], reference=frozenset({"gemm_ref"}))
    assert "interference" not in got


def test_a_memset_on_another_stream_in_a_reference_block_is_interference():
    from kernelsmith_worker.gpu_profile import accounting_findings

    got = _eager_blocks(["mm_kernel"], reference=frozenset({"gemm_ref"}),
                        ref_extra=[("[memset]", 21)] * 12)
    assert got["interference"] == [["[memset]", 21, 12.0, 12]]
    found = accounting_findings(got, per_call=1)
    assert [(f["kind"], f["severity"]) for f in found] == [("reference_interference", "reject")]
    assert "[memset] x12 on stream 21" in found[0]["detail"]


def test_a_known_name_on_another_stream_or_a_new_name_on_its_stream_is_interference():
    got = _eager_blocks(["mm_kernel"], reference=frozenset({"gemm_ref"}),
                        ref_extra=[("gemm_ref", 21), "spin_kernel_x"])
    assert sorted((n, s) for n, s, _, _ in got["interference"]) == [("gemm_ref", 21),
                                                                    ("spin_kernel_x", 7)]


def test_reference_blocks_are_not_read_without_the_references_names():
    got = _eager_blocks(["mm_kernel"], reference=None, ref_extra=[("[memset]", 21)] * 3)
    assert "interference" not in got


def test_memcpy_and_memset_records_are_glue_not_foreign():
    from types import SimpleNamespace as NS

    from kernelsmith_worker.gpu_profile import classify_events

    evs = [NS(name=n, device_resource_id=7, count=1, time_range=NS(elapsed_us=lambda: 1.0))
           for n in ("[memcpy DtoD]", "[memset]", "triton_mine")]
    prof = classify_events(evs, {"triton_mine"})
    assert prof.glue_us == 2.0 and prof.foreign_us == 0.0 and prof.custom_launches == 1
