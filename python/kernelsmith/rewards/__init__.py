"""Reward adapters that call `kernelsmith serve` (docs/training.md). Import as
``kernelsmith.rewards``; the older name ``kernelsmith_rewards`` is an alias of this package.

- verl: ``compute_score`` (sync), ``compute_score_async``, ``compute_score_batch``
  (``custom_reward_function.path`` = this package's ``verl.py``).
- TRL: ``kernelsmith_reward`` / ``make_trl_reward`` for ``GRPOTrainer(reward_funcs=...)``.
- ``RewardClient``: the stdlib HTTP client both use.

The service URL comes from the ``url`` argument, else ``$KS_REWARD_URL``, else
``http://127.0.0.1:8080``.
"""

from kernelsmith.rewards.client import RewardClient, RewardServiceError
from kernelsmith.rewards.trl import kernelsmith_reward, make_trl_reward
from kernelsmith.rewards.verl import compute_score, compute_score_async, compute_score_batch

__all__ = [
    "RewardClient",
    "RewardServiceError",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "kernelsmith_reward",
    "make_trl_reward",
]
