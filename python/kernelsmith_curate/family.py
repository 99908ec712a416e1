"""Functional family of a module, from its operators and its class name.

Each operator has a *kind* (op_kind): attention, recurrent, embedding, convolution, pooling,
upsampling, normalization, linear, matmul, loss, activation, reduction, elementwise,
dropout_noise; layout (view, cat, ...) and unknown operators have none.

Family, first rule that matches (N = class name, lowercased):
 1. loss            a loss operator, or N contains "loss"
 2. recurrent       lstm/gru/rnn operators, or N contains lstm/gru/rnn
 3. gating_moe      N contains moe/expert/router/gating, or topk + softmax + linear
 4. transformer_block / attention
                    an attention operator, N contains "attention"/"attn", or softmax with a
                    matmul-kind operator: transformer_block when normalization and linear or
                    convolution are also used and N names a block/layer/encoder/decoder/
                    transformer, attention otherwise
 5. positional      N names a positional/rotary encoding, or sin and cos without convolution
 6. embedding       an embedding operator, or N contains "embed"
 7. residual_block  convolution + normalization and N names a block/bottleneck/residual/resnet
 8. composite       three or more of convolution, linear, matmul, upsampling, pooling,
                    normalization
 9. the first present of convolution, upsampling, pooling, linear, matmul
10. a name hint: N contains norm -> normalization, pool -> pooling, upsampl -> upsampling,
    dropout/droppath/noise -> dropout_noise, activ/relu/gelu/swish/mish/sigmoid/tanh/softmax
    -> activation
11. normalization if used
12. dropout_noise, activation, reduction, elementwise: the first kind present in that order
13. other
"""

from __future__ import annotations

FAMILIES: tuple[str, ...] = (
    "activation", "normalization", "attention", "convolution", "pooling", "loss", "embedding",
    "recurrent", "linear", "elementwise", "reduction", "matmul", "upsampling", "dropout_noise",
    "positional", "gating_moe", "transformer_block", "residual_block", "composite", "other")

_ACTIVATIONS = frozenset({
    "relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "softplus", "softsign", "elu", "selu",
    "celu", "leaky_relu", "leakyrelu", "prelu", "rrelu", "hardswish", "hardsigmoid",
    "hardtanh", "mish", "swish", "logsigmoid", "softmax", "log_softmax", "logsoftmax",
    "softmin", "glu", "threshold", "tanhshrink", "softshrink", "hardshrink", "softmax2d"})
_REDUCTIONS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "logsumexp",
    "cumsum", "cumprod", "std", "var", "norm", "median", "all", "any", "topk", "sort",
    "kthvalue", "var_mean", "std_mean"})
_ELEMENTWISE = frozenset({
    "add", "sub", "mul", "div", "pow", "exp", "log", "sqrt", "rsqrt", "abs", "neg", "clamp",
    "clip", "where", "maximum", "minimum", "sin", "cos", "tan", "reciprocal", "sign", "floor",
    "ceil", "round", "exp2", "log2", "log1p", "expm1", "lerp", "addcmul", "addcdiv", "square",
    "erf", "erfc", "masked_fill", "clamp_min", "clamp_max", "tril", "triu", "atan2"})
_MATMUL = frozenset({"matmul", "mm", "bmm", "einsum", "baddbmm", "addmm", "addbmm",
                     "tensordot", "outer", "linalg"})
_RECURRENT = frozenset({"lstm", "gru", "rnn", "lstmcell", "grucell", "rnncell"})
_UPSAMPLING = frozenset({"interpolate", "upsample", "upsample_bilinear", "upsample_nearest",
                         "pixel_shuffle", "pixelshuffle", "pixel_unshuffle", "pixelunshuffle",
                         "upsamplingbilinear2d", "upsamplingnearest2d", "grid_sample"})
_NOISE = frozenset({"bernoulli", "rand_like", "randn_like", "drop_path", "randint_like"})
_LOSS_EXTRA = frozenset({"cross_entropy", "kl_div", "binary_cross_entropy",
                         "binary_cross_entropy_with_logits", "nll_loss"})


def op_kind(op: str) -> str | None:
    """The kind of an operator, or None when it is layout or unknown."""
    if "loss" in op or op in _LOSS_EXTRA:
        return "loss"
    if "attention" in op:
        return "attention"
    if op in _RECURRENT:
        return "recurrent"
    if "embedding" in op:
        return "embedding"
    if op.startswith("conv"):
        return "convolution"
    if "pool" in op:
        return "pooling"
    if op in _UPSAMPLING:
        return "upsampling"
    if "norm" in op and op != "norm":
        return "normalization"
    if op in ("linear", "bilinear", "lazylinear"):
        return "linear"
    if op in _MATMUL:
        return "matmul"
    if "dropout" in op or op in _NOISE:
        return "dropout_noise"
    if op in _ACTIVATIONS:
        return "activation"
    if op in _REDUCTIONS:
        return "reduction"
    if op in _ELEMENTWISE:
        return "elementwise"
    return None


_NAME_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("norm",), "normalization"), (("pool",), "pooling"), (("upsampl",), "upsampling"),
    (("dropout", "droppath", "drop_path", "noise"), "dropout_noise"),
    (("activ", "relu", "gelu", "swish", "mish", "sigmoid", "tanh", "softmax"), "activation"))


def _has(name: str, words: tuple[str, ...]) -> bool:
    return any(w in name for w in words)


def family(ops: list[str], class_name: str) -> str:
    kinds = {k for k in map(op_kind, ops) if k}
    n = class_name.lower()
    opset = set(ops)
    if "loss" in kinds or "loss" in n:
        return "loss"
    if "recurrent" in kinds or _has(n, ("lstm", "gru", "rnn")):
        return "recurrent"
    if _has(n, ("moe", "expert", "router", "gating")) or \
            {"topk", "softmax"} <= opset and "linear" in kinds:
        return "gating_moe"
    if "attention" in kinds or _has(n, ("attention", "attn")) or \
            ("softmax" in opset and "matmul" in kinds):
        block = _has(n, ("block", "layer", "encoder", "decoder", "transformer"))
        if block and "normalization" in kinds and kinds & {"linear", "convolution"}:
            return "transformer_block"
        return "attention"
    if _has(n, ("positional", "posemb", "pos_emb", "posenc", "rotary", "rope")) or \
            {"sin", "cos"} <= opset and "convolution" not in kinds:
        return "positional"
    if "embedding" in kinds or "embed" in n:
        return "embedding"
    if {"convolution", "normalization"} <= kinds and \
            _has(n, ("block", "bottleneck", "residual", "resnet")):
        return "residual_block"
    layers = ("convolution", "upsampling", "pooling", "linear", "matmul", "normalization")
    present = [k for k in layers if k in kinds]
    if len(present) >= 3:
        return "composite"
    if present and present != ["normalization"]:
        return present[0]
    for words, k in _NAME_HINTS:
        if _has(n, words):
            return k
    if present:
        return present[0]
    for k in ("dropout_noise", "activation", "reduction", "elementwise"):
        if k in kinds:
            return k
    return "other"
