"""Which torch functions and autograd nodes mean what to the recorder's checks.

Tables only: losses and what they expect of their input and target, log-probabilities and
sampled actions and the ops that keep them so, products, ops whose derivative is zero
almost everywhere, backward formulas that can turn finite gradients into NaN/Inf. The mode
looks a call's function up in them by identity, so a check costs a set lookup per call.
"""

from __future__ import annotations

import torch

from gradprobe._compat import INFERENCE_SAVED_ERROR

_ADDITIVE = frozenset(
    {"add", "__add__", "__radd__", "add_", "__iadd__", "sub", "__sub__", "__rsub__", "sub_"}
)
# Backward formulas that turn finite gradients into NaN/Inf at the edge of their domain.
_RISKY = frozenset(
    {
        "SqrtBackward0",
        "RsqrtBackward0",
        "PowBackward0",
        "PowBackward1",
        "PowBackward2",
        "DivBackward0",
        "DivBackward1",
        "ReciprocalBackward0",
        "LogBackward0",
        "Log2Backward0",
        "Log10Backward0",
        "Log1PBackward0",
        "NormBackward0",
        "NormBackward1",
        "LinalgVectorNormBackward0",
        "CdistBackward0",
        "AcosBackward0",
        "AsinBackward0",
        "AtanhBackward0",
        "Atan2Backward0",
        "XlogyBackward0",
    }
)


def _NUMPY_EXIT() -> None:
    """Stands for a round trip through numpy in :class:`Cut` records."""


_NUMPY_EXIT.__name__ = "numpy"
_CUSTOM_NODE = torch.autograd.function.BackwardCFunction
_F = torch.nn.functional
# losses whose second argument is a target that should not carry gradients
_LOSS_TARGETS = frozenset(
    getattr(_F, name)
    for name in (
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "kl_div",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "cross_entropy",
        "nll_loss",
    )
    if hasattr(_F, name)
)
# Python functions whose warnings name their caller's line (stacklevel): under the mode
# that caller is the recorder, so their warnings are re-issued at the user's line
_WARNS_AT_CALLER = _LOSS_TARGETS | frozenset(
    getattr(_F, name) for name in ("softmax", "log_softmax", "softmin") if hasattr(_F, name)
)
# log-probabilities of chosen actions (score-function terms): the full output of
# log_softmax, then the entries picked from it by an index tensor; ops that keep either
_LOG_SOFTMAX = frozenset((_F.log_softmax, torch.log_softmax, torch.Tensor.log_softmax))
_PICK = frozenset(
    (
        torch.gather,
        torch.Tensor.gather,
        torch.take_along_dim,
        torch.Tensor.take_along_dim,
        torch.index_select,
        torch.Tensor.index_select,
        torch.Tensor.__getitem__,
    )
)
_RESHAPES = frozenset(
    (
        torch.squeeze,
        torch.Tensor.squeeze,
        torch.unsqueeze,
        torch.Tensor.unsqueeze,
        torch.Tensor.view,
        torch.reshape,
        torch.Tensor.reshape,
        torch.flatten,
        torch.Tensor.flatten,
    )
)
_KEEP_LOG_PROB = _RESHAPES | frozenset(
    (
        torch.sum,
        torch.Tensor.sum,
        torch.neg,
        torch.Tensor.neg,
        torch.Tensor.__neg__,
        torch.Tensor.clone,
        torch.Tensor.contiguous,
    )
)
_JOIN = frozenset((torch.stack, torch.cat, torch.concat))
# sampled actions: what the log-probability is of (not data, whose weighted log-likelihood
# may be trained on purpose), and the ops that keep a sample a sample
_SAMPLERS = frozenset((torch.multinomial, torch.Tensor.multinomial, torch.bernoulli))
_KEEP_SAMPLE = _RESHAPES | frozenset(
    (
        torch.Tensor.long,
        torch.Tensor.to,
        torch.Tensor.clone,
        torch.Tensor.detach,
        torch.Tensor.__getitem__,
    )
)
_LOG_PROB_START = _LOG_SOFTMAX | _SAMPLERS
_PRODUCTS = frozenset(
    (
        torch.mul,
        torch.multiply,
        torch.Tensor.mul,
        torch.Tensor.multiply,
        torch.Tensor.__mul__,
        torch.Tensor.__rmul__,
    )
)
# differentiable ops whose derivative is zero almost everywhere
ZERO_DERIVATIVE = frozenset(
    f
    for f in (
        torch.round,
        torch.floor,
        torch.ceil,
        torch.sign,
        torch.trunc,
        torch.Tensor.round,
        torch.Tensor.floor,
        torch.Tensor.ceil,
        torch.Tensor.sign,
        torch.Tensor.trunc,
    )
)
_INFERENCE_SAVED = INFERENCE_SAVED_ERROR

# Functions that write some of their arguments in place without moving the version counter
# (pytorch#13402): a training-mode batch norm updates running_mean/running_var. Function ->
# (positions of the written arguments, their keyword names, position of `training`).
_SILENT_WRITES: dict[object, tuple[tuple[int, ...], tuple[str, ...], int]] = {
    _F.batch_norm: ((1, 2), ("running_mean", "running_var"), 5),
    torch.batch_norm: ((3, 4), ("running_mean", "running_var"), 5),
}

# Tensor methods and torch functions whose result is their only effect: as a statement of
# their own (`x.clamp(0, 1)`, `scores.masked_fill(mask, -inf)`, `x.to(device)`) they do
# nothing, and the user meant the in-place twin or an assignment.
_PURE_NAMES = (
    "clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "masked_scatter",
    "index_fill", "index_add", "index_copy", "scatter", "scatter_add", "add", "sub",
    "mul", "div", "true_divide", "relu", "sigmoid", "tanh", "abs", "neg", "exp", "log",
    "sqrt", "pow", "sign", "round", "floor", "ceil", "t", "transpose", "permute",
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "to", "cuda", "cpu", "float",
    "double", "half", "bfloat16", "long", "int", "detach", "clone", "contiguous",
    "expand", "repeat", "where", "nan_to_num", "fill_diagonal", "zero", "normal",
)  # fmt: skip
_PURE_RESULT = frozenset(
    f
    for name in _PURE_NAMES
    for f in (getattr(torch.Tensor, name, None), getattr(torch, name, None))
    if callable(f)
) | frozenset(getattr(_F, name) for name in ("normalize", "relu", "dropout") if hasattr(_F, name))
