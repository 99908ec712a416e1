# Test candidate (cpu backend): reads frames at import, from code compiled at run time under
# a standard-library file name and through inspect (neither names sys._getframe in its source).
import inspect
import os

import torch.nn as nn

from softmax_cpp import kernel_softmax

_frames = []
exec(compile("import sys as s; _frames.append(getattr(s, '_get' + 'frame')(1))",
             os.__file__, "exec"))


class ModelNew(nn.Module):
    def forward(self, x):
        _frames.append(inspect.currentframe())
        return kernel_softmax(x)


def _interpreter_frame():  # the interpreter's C API through ctypes: no frame audit event
    import ctypes

    api = ctypes.PyDLL(None)
    return api.PyEval_GetFrame  # looked up (calling it here would need care with 3.11 frames)


_frames.append(_interpreter_frame())
