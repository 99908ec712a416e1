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
