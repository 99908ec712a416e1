"""The older path of python/kernelsmith/rewards/verl.py, for verl configs that name this file
(``custom_reward_function.path``): verl loads it as a file, so it loads the new one as a file
and takes its functions."""

import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "kernelsmith_rewards_verl",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernelsmith", "rewards",
                 "verl.py"),
)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
compute_score = _module.compute_score
compute_score_async = _module.compute_score_async
compute_score_batch = _module.compute_score_batch
