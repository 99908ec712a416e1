"""TRL (GRPOTrainer) reward function backed by `kernelsmith serve`.

    from kernelsmith.rewards import make_trl_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[make_trl_reward()], train_dataset=rl_dataset)

TRL passes every dataset column as a keyword argument. The ground truth is read from the
column named ``column`` (default: ``label``, written by ``kernelsmith export rl``), falling back
to ``reward_model["ground_truth"]`` (verl's layout, same JSON).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from kernelsmith.rewards.client import RewardClient


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a conversational list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    raise TypeError(f"unexpected completion type {type(completion).__name__}")


def ground_truths_from(kwargs: dict, n: int, column: str) -> list[Any]:
    if kwargs.get(column) is not None:
        truths = list(kwargs[column])
    elif kwargs.get("reward_model") is not None:
        truths = [rm["ground_truth"] for rm in kwargs["reward_model"]]
    else:
        raise KeyError(
            f"no ground truth column: the dataset needs '{column}' or 'reward_model' "
            f"(as `kernelsmith export rl` writes); columns seen: {sorted(kwargs)}"
        )
    if len(truths) != n:
        raise ValueError(f"{n} completions but {len(truths)} ground truths")
    return truths


def make_trl_reward(
    url: str | None = None, column: str = "label", client: RewardClient | None = None
) -> Callable[..., list[float]]:
    """A TRL reward function ``reward(completions, **kwargs) -> list[float]``."""
    rc = client or RewardClient(url)

    def kernelsmith_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
        texts = [completion_text(c) for c in completions]
        return rc.rewards(texts, ground_truths_from(kwargs, len(texts), column))

    return kernelsmith_reward


def kernelsmith_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """The default reward function: $KS_REWARD_URL, ground truths in the 'label' column."""
    return make_trl_reward()(completions, **kwargs)
