# A problem without get_inputs / get_init_inputs (tests/e2e/bad_inputs.sh).
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0)
