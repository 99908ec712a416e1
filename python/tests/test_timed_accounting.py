"""The launch accounting of timed samples: profiled the way timed samples run, with the
evaluator's own kernels (input refresh, L2 flush) taken out by name and count."""
from kernelsmith_worker import timing_cuda


class Log:
    def __init__(self):
        self.kernels = []


class FakeApi:
    """kernels_of returns what the call appended to the log."""

    def __init__(self, log):
        self.log = log

    def kernels_of(self, call):
        start = len(self.log.kernels)
        call()
        return [[n, 1.0] for n in self.log.kernels[start:]]


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
    got = timing_cuda._timed_sample_kernels(FakeApi(log), runner, inputs)
    names = [n for n, _ in got["kernels"]]
    return got, names, timed_findings(got["kernels"], {"mm_kernel", "copy_kernel"},
                                      got["calls"], per_call=1)


def test_the_evaluators_kernels_are_taken_out_and_the_candidates_kept():
    got, names, found = _accounting(HonestRunner)
    samples = timing_cuda.ACCOUNTED_SAMPLES
    assert got["calls"] == samples * 8
    assert names.count("mm_kernel") == samples * 8
    assert names.count("copy_kernel") == samples * 8  # the candidate's own copies stay
    assert "flush_kernel" not in names
    assert found == []


def test_a_candidate_that_batches_after_the_first_profiled_sample_is_caught():
    got, names, found = _accounting(BatchingRunner)
    assert names.count("mm_kernel") == 8 + timing_cuda.ACCOUNTED_SAMPLES - 1
    assert [f["kind"] for f in found] == ["timed_launch_deficit"]


def test_no_profile_means_no_accounting():
    class NoProfiler(FakeApi):
        def kernels_of(self, call):
            call()
            return None

    log = Log()
    inputs = Inputs(log)
    assert timing_cuda._timed_sample_kernels(NoProfiler(log), HonestRunner(log, inputs),
                                             inputs) is None


def test_accounting_that_cannot_be_made_is_a_reject():
    from kernelsmith_worker.gpu_profile import accounting_findings

    raised = accounting_findings({"error": "RuntimeError: observed"}, per_call=1)
    assert [(f["kind"], f["severity"]) for f in raised] == [("timed_sample_failed", "reject")]
    missing = accounting_findings(None, per_call=2)
    assert [f["kind"] for f in missing] == ["accounting_failed"]
    assert accounting_findings(None, per_call=0) == []  # no profile in the audit either (CPU)
    assert accounting_findings({"kernels": [], "calls": 8}, per_call=1) == []


def test_a_sample_that_raises_under_the_profiler_is_reported():
    class Raising(HonestRunner):
        def run(self, name):
            raise RuntimeError("observed")

    log = Log()
    inputs = Inputs(log)
    got = timing_cuda._timed_sample_kernels(FakeApi(log), Raising(log, inputs), inputs)
    assert got == {"error": "RuntimeError: observed"}


def test_record_function_ranges_are_not_kernels():
    from types import SimpleNamespace as NS

    from kernelsmith_worker.gpu_profile import classify_events

    def ev(name, us, annotation=False):
        return NS(name=name, device_resource_id=7, is_user_annotation=annotation,
                  time_range=NS(elapsed_us=lambda: us))
    prof = classify_events([ev("mm_kernel", 10.0), ev("my_matmul_range", 10.0, True)],
                           {"mm_kernel"})
    assert prof.kernels == 1 and prof.foreign_us == 0 and prof.custom_launches == 1
