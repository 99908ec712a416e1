"""Input generation on the device and the byte-bounded LRU cache."""

from __future__ import annotations

import torch

from kernelsmith_worker.inputs import InputCache, TrialData, clone_args, generate_inputs, nbytes


def test_generate_inputs_is_seeded_and_keeps_dtypes():
    def get_inputs():
        return [torch.rand(3, 4), torch.randint(0, 10, (5,)), 7, torch.rand(2, dtype=torch.float16)]

    a = generate_inputs(get_inputs, 5, torch.device("cpu"))
    b = generate_inputs(get_inputs, 5, torch.device("cpu"))
    c = generate_inputs(get_inputs, 6, torch.device("cpu"))
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
    assert a[1].dtype == torch.int64 and a[2] == 7 and a[3].dtype == torch.float16
    clone = clone_args(a)
    assert clone[0] is not a[0] and torch.equal(clone[0], a[0]) and clone[2] == 7
    assert nbytes(a) == 12 * 4 + 5 * 8 + 2 * 2


def test_generate_inputs_runs_under_the_device_context():
    seen = []

    def get_inputs():
        seen.append(torch.empty(1).device)
        return [torch.zeros(1)]

    generate_inputs(get_inputs, 0, torch.device("meta"))
    assert seen == [torch.device("meta")]


def test_cache_is_lru_bounded_by_bytes():
    cache = InputCache(budget_bytes=1000)
    def data(n): return TrialData([torch.zeros(n, dtype=torch.uint8)])
    assert cache.put(("p", 0, 0, "cpu"), data(400), 0)
    assert cache.put(("q", 0, 0, "cpu"), data(400), 0)
    assert cache.get(("p", 0, 0, "cpu")) is not None  # now most recent
    assert cache.put(("r", 0, 0, "cpu"), data(400), 0)  # evicts q's trial
    assert cache.get(("q", 0, 0, "cpu")) is None
    assert cache.get(("p", 0, 0, "cpu")) is not None and cache.bytes_used == 800
    assert not cache.put(("p", 0, 3, "cpu"), data(5000), 0)  # larger than the budget
    assert cache.get(("p", 0, 3, "cpu")) is None and len(cache) == 2
    entry = cache.get(("p", 0, 0, "cpu"))
    entry.reference, entry.has_reference = torch.zeros(100, dtype=torch.uint8), True
    assert cache.put(("p", 0, 0, "cpu"), entry, 0)
    assert cache.bytes_used == 900


def test_cache_keeps_a_requests_trials_rather_than_cycle_them():
    # Trials read in a loop 0, 1, 2, 0, 1, 2: an LRU of two would miss every time.
    cache = InputCache(budget_bytes=1000)
    def data(n): return TrialData([torch.zeros(n, dtype=torch.uint8)])
    assert cache.put(("p", 0, 0, "cpu"), data(400), 0)
    assert cache.put(("p", 0, 1, "cpu"), data(400), 0)
    assert not cache.admits(("p", 0, 2, "cpu"), 400, 0)
    assert not cache.put(("p", 0, 2, "cpu"), data(400), 0)  # kept: trials 0 and 1
    assert cache.get(("p", 0, 0, "cpu")) is not None and cache.get(("p", 0, 1, "cpu"))
    assert cache.admits(("p", 0, 1, "cpu"), 600, 0)  # replacing itself
    assert cache.admits(("p", 1, 0, "cpu"), 1000, 0)  # another seed: evicts the older ones
    assert cache.put(("p", 1, 0, "cpu"), data(1000), 0) and len(cache) == 1


def test_get_inputs_must_return_a_list_or_tuple_with_any_elements():
    import pytest
    from kernelsmith_worker.inputs import InputError

    ok = generate_inputs(lambda: (torch.ones(2), 3, [1, 2], None, 0.5), 0, torch.device("cpu"))
    assert ok[1:] == [3, [1, 2], None, 0.5]
    with pytest.raises(InputError, match=r"returned None \(a missing `return`\?\); it must "
                                         r"return a list of Model.forward's positional"):
        generate_inputs(lambda: None, 0, torch.device("cpu"))
    with pytest.raises(InputError, match="returned a dict; it must return a list"):
        generate_inputs(lambda: {"x": torch.ones(2)}, 0, torch.device("cpu"))
    with pytest.raises(InputError, match="returned a Tensor"):
        generate_inputs(lambda: torch.ones(2), 0, torch.device("cpu"))


def test_inputs_larger_than_free_memory_are_refused_before_allocation():
    import pytest
    from kernelsmith_worker.inputs import InputError, available_bytes, planned_input_bytes

    free = available_bytes(torch.device("cpu"))
    assert free is not None and free > 0
    rows = free // (4 * 1024) + 1024  # fp32 rows of 1024: more than is free
    calls = []

    def huge():
        calls.append(torch.empty(0).device.type)
        return [torch.rand(rows, 1024)]

    assert planned_input_bytes(huge) == rows * 1024 * 4
    calls.clear()
    with pytest.raises(InputError, match=r"get_inputs\(\) would allocate .* GiB of inputs but "
                                         r"only .* GiB is available on cpu; make the inputs"):
        generate_inputs(huge, 0, torch.device("cpu"))
    assert calls == ["meta"], "only the meta probe ran: nothing real was allocated"
    # Data-dependent code cannot run on meta: the probe steps aside and the real call runs.
    def masked():
        x = torch.rand(4)
        return [x[x > 2.0]]

    assert planned_input_bytes(masked) is None
    assert generate_inputs(masked, 0, torch.device("cpu"))[0].numel() == 0


def test_host_copy_is_a_copy_and_pins_only_within_the_budget(monkeypatch):
    import torch
    from kernelsmith_worker import inputs

    t = torch.arange(6.0).reshape(2, 3).t()  # a transposed view: strides are kept
    (c,) = inputs.host_copy([t], per_request=True)  # a CPU tensor is never page-locked
    assert torch.equal(c, t) and c.data_ptr() != t.data_ptr() and c.stride() == t.stride()
    monkeypatch.setattr(torch.cuda, "host_memory_stats", lambda: {"active_bytes.current": 60})
    monkeypatch.setenv("KS_PINNED_HOST_BYTES", "100")
    assert inputs._may_pin(40) and not inputs._may_pin(41)
    monkeypatch.delenv("KS_PINNED_HOST_BYTES")
    assert inputs.pinned_budget() > 0  # 1/16 of the host's memory

    def no_stats():
        raise RuntimeError("no pinned allocator statistics")

    monkeypatch.setattr(torch.cuda, "host_memory_stats", no_stats)
    assert not inputs._may_pin(1)
