"""verl reward functions backed by `kernelsmith serve`.

In a verl config::

    custom_reward_function:
      path: python/kernelsmith/rewards/verl.py
      name: compute_score            # or compute_score_batch with reward_model.reward_manager=batch
      reward_kwargs: {url: http://127.0.0.1:8080}
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

try:  # loaded as a package module or, by verl, as a file
    from kernelsmith.rewards.client import RewardClient
except ImportError:  # pragma: no cover - verl imports the file without the package on the path
    import importlib.util
    import os
    import sys

    _spec = importlib.util.spec_from_file_location(
        "kernelsmith_rewards_client", os.path.join(os.path.dirname(__file__), "client.py")
    )
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["kernelsmith_rewards_client"] = _module
    _spec.loader.exec_module(_module)
    RewardClient = _module.RewardClient

_clients: dict[str | None, RewardClient] = {}


def _client(url: str | None) -> RewardClient:
    if url not in _clients:
        _clients[url] = RewardClient(url)
    return _clients[url]


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    url: str | None = None,
    **kwargs: Any,
) -> float:
    """verl's per-sample reward: the service's reward for ``solution_str``."""
    del data_source, extra_info, kwargs
    return _client(url).rewards([solution_str], [ground_truth])[0]


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    url: str | None = None,
    **kwargs: Any,
) -> float:
    """As compute_score, without blocking the event loop (many samples in flight at once)."""
    return await asyncio.to_thread(
        compute_score, data_source, solution_str, ground_truth, extra_info, url, **kwargs
    )


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[dict | None] | None = None,
    url: str | None = None,
    **kwargs: Any,
) -> list[float]:
    """verl's batch reward manager: one HTTP request for the whole batch."""
    del data_sources, extra_infos, kwargs
    return _client(url).rewards(list(solution_strs), list(ground_truths))
