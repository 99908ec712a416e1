"""The older name of ``kernelsmith.rewards``, kept so that existing imports and trainer
configs go on working: ``kernelsmith_rewards`` and its modules are the same module objects as
``kernelsmith.rewards`` and its modules."""

import sys

from kernelsmith import rewards as _rewards
from kernelsmith.rewards import client, trl, verl

for _name, _module in (("client", client), ("trl", trl), ("verl", verl)):
    sys.modules[f"{__name__}.{_name}"] = _module
sys.modules[__name__] = _rewards
