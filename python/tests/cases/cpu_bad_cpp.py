# Test candidate whose C++ does not compile.
import torch.nn as nn

from kernelsmith_worker import cpu_ext

_lib = cpu_ext.load(name="bad", source='extern "C" void f(float* x) { this is not C++; }',
                    functions={"f": "void(float*)"})


class ModelNew(nn.Module):
    def forward(self, x):
        return x
