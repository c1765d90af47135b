"""What gradprobe relies on that differs between torch versions or lives in torch's words.

Torch's error messages are the only public account of some facts (the version a saved
tensor had, which hook changed a gradient), so gradprobe parses them; each text is written
down once, here, with the torch versions it was checked on (2.13 and 2.14, see
``shared/TORCH-FACTS.md``). Version gates are here too, so a new torch release is one
file to read.

Example:
    >>> from gradprobe._compat import FREED_ERROR
    >>> FREED_ERROR in "Trying to backward through the graph a second time (or ...)"
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

__all__ = [
    "AUTOGRAD_INSIDE_TRANSFORM_ERROR",
    "BATCHED_GRAD_SHAPE_ERROR",
    "CHECKPOINT_MISMATCH_ERROR",
    "CHECKPOINT_NO_GRAD_WARNING",
    "COMPLEX_IMPLICIT_ERROR",
    "CUSTOM_FUNCTION_VIEW_TEXT",
    "CUSTOM_RETURN_ERROR",
    "DDP_READY_TWICE_ERROR",
    "DDP_UNFINISHED_REDUCTION_ERROR",
    "DETACH_VIEW_ERROR",
    "DEVICE_MISMATCH",
    "DTYPE_MISMATCH",
    "FP16_UNSCALE_ERROR",
    "FREED_ERROR",
    "FUNC_GRAD_NONSCALAR_ERROR",
    "GRAD_OUTPUT_SHAPE_ERROR",
    "HOOK_ARITY_ERROR",
    "HOOK_CHANGED_ERROR",
    "HOOK_WITHOUT_GRAD_ERROR",
    "INFERENCE_OUTSIDE_ERROR",
    "INFERENCE_SAVED_ERROR",
    "INPLACE_VIEW_ERROR",
    "INPUT_WITHOUT_GRAD_ERROR",
    "INTEGER_GRAD_ERROR",
    "LEAF_INPLACE_ERROR",
    "LEAF_INPLACE_TEXT",
    "MULTI_VIEW_TEXT",
    "NONSCALAR_ERROR",
    "NON_LEAF_FLAG_ERROR",
    "NO_GRAD_FN_ERROR",
    "NO_GRAD_FN_TEXT",
    "NO_GRAD_VIEW_TEXT",
    "ONCE_DIFFERENTIABLE_ERROR",
    "OVERLAPPING_WRITE_ERROR",
    "REENTRANT_CHECKPOINT_GRAD_ERROR",
    "SAVE_NON_TENSOR_ERROR",
    "UNSCALE_TWICE_ERROR",
    "UNUSED_INPUT_ERROR",
    "VERSION_ERROR",
    "VIEW_INPLACE_ERROR",
    "WARNED_TEXTS",
    "WORDED_TEXTS",
    "checkpoint_generator_names",
    "compiled_region",
    "node_creation_hook",
    "resumed_name",
]

# -- torch's error texts (2.13 and 2.14 wording) ------------------------------------------------

# engine: torch/csrc/autograd/saved_variable.cpp (SavedVariable::unpack)
VERSION_ERROR = re.compile(
    r"modified by an inplace operation: \[(?P<type>[\w.]+) \[(?P<shape>[^\]]*)\]\]"
    r"(?:, which is output (?P<output>\d+) of (?P<grad_fn>[^,]+),)?"
    r" is at version (?P<now>\d+); expected version (?P<saved>\d+) instead"
)
"""A saved tensor was written in place after it was saved (``VariableVersion`` checks)."""

# engine: torch/csrc/autograd/saved_variable.cpp (unpack after release)
FREED_ERROR = "Trying to backward through the graph a second time"
"""A backward through a graph whose saved tensors an earlier backward freed."""

# engine: torch/autograd/__init__.py (_make_grads)
NONSCALAR_ERROR = "grad can be implicitly created only for scalar outputs"
"""``backward()`` without a gradient on a tensor of more than one element."""

# engine: torch/csrc/autograd/engine.cpp and python_engine.cpp (root checks)
NO_GRAD_FN_TEXT = "does not require grad and does not have a grad_fn"
NO_GRAD_FN_ERROR = re.compile(r"element (?P<index>\d+) of tensors " + NO_GRAD_FN_TEXT[:27])
"""``backward()`` on a tensor with no graph behind it (``index``: which root)."""

# engine: torch/csrc/autograd/VariableTypeUtils.h (check_inplace) and
# custom_function.cpp (mark_dirty on a leaf); torch/csrc/autograd/variable.cpp (rebase)
LEAF_INPLACE_TEXT = "leaf Variable that requires grad"
LEAF_INPLACE_ERROR = re.compile(
    r"a (?P<view>view of a )?leaf Variable that requires grad (?:is being|has been) used in an "
    r"in-place operation|leaf variable has been moved into the graph interior"
)
"""An in-place write on a leaf that requires grad (or a view of one)."""

# engine: torch/csrc/autograd/variable.h / python_variable.cpp (set_requires_grad)
INTEGER_GRAD_ERROR = re.compile(
    r"[Oo]nly Tensors of floating point (?:and complex )?dtype can require"
)
"""``requires_grad`` asked of an integer tensor."""

# engine: torch/csrc/autograd/python_variable.cpp (THPVariable_set_requires_grad)
NON_LEAF_FLAG_ERROR = "you can only change requires_grad flags of leaf variables"
"""``requires_grad = False`` set on a tensor that is not a leaf."""

# hooks: torch/csrc/autograd/variable.cpp (handle_view_on_rebase) on the views
# torch/utils/hooks.py (BackwardHook) makes
INPLACE_VIEW_ERROR = "of BackwardHookFunction is a view and is being modified inplace"
"""A full-hooked module's input or output written in place (TORCH-FACTS Q2)."""

# hooks: torch/csrc/autograd/python_hook.cpp (check_single_result)
HOOK_CHANGED_ERROR = re.compile(r"hook '([^']*)' has changed the (\w+) of value")
"""A tensor hook returned a gradient of another shape or type (groups: hook, what)."""

# hooks: torch/utils/hooks.py (BackwardHook._set_user_hook / setup_output_hook)
HOOK_ARITY_ERROR = re.compile(
    r"Backward (pre )?hook returned an invalid number of grad_(input|output), "
    r"got (\d+), but expected (\d+)"
)
"""A full backward (pre-)hook returned a tuple of the wrong length."""

# inference mode: torch/csrc/autograd/saved_variable.cpp (SavedVariable constructor)
INFERENCE_SAVED_ERROR = "Inference tensors cannot be saved for backward"
"""A tensor made under ``inference_mode`` used where autograd must save it."""

# aten/src/ATen/MemoryOverlap.cpp (assert_no_internal_overlap)
OVERLAPPING_WRITE_ERROR = "more than one element of the written-to tensor refers to a single memory"
"""An in-place write to an expanded tensor (the gradient of ``sum()``)."""


# custom Function: torch/csrc/autograd/engine.cpp (validate_outputs) and
# python_function.cpp (a gradient for a non-tensor input)
CUSTOM_RETURN_ERROR = re.compile(
    r"[Ff]unction (?P<name>\w+)Backward returned (?:"
    r"an incorrect number of gradients \(expected (?P<expected>\d+), got (?P<got>\d+)\)"
    r"|an invalid gradient at index (?P<index>\d+)"
    r"|a gradient different than None at position (?P<position>\d+))"
)
"""A custom Function's backward returned gradients that do not match its forward's inputs
(their number, a shape, a gradient for an input that is not a tensor)."""

# aten kernels (matmul, addmm, ...): many texts, matched loosely
DTYPE_MISMATCH = re.compile(
    r"same dtype|expected scalar type|dtype|BFloat16|Half|should be the same", re.IGNORECASE
)
"""An error about mixed floating types (float32 with bfloat16/float16)."""

# aten/src/ATen/TensorIterator.cpp and native kernels (check_same_device)
DEVICE_MISMATCH = "Expected all tensors to be on the same device"
"""Tensors on different devices met in one op (a layer .to() never reached)."""

# autograd.grad: torch/csrc/autograd/python_engine.cpp (allow_unused=False)
UNUSED_INPUT_ERROR = re.compile(
    r"(?:The differentiated Tensor at index (?P<index>\d+)|One of the differentiated "
    r"Tensors) appears to not have been used in the graph"
)
"""``autograd.grad`` was asked for the gradient of an input the outputs do not depend on."""


# -- the error catalogue (gradprobe.checks._catalogue): one pattern per message ----------------
# Each comment names the torch source that raises the text (C++ under torch/csrc, Python under
# torch/); every pattern is exercised on 2.13.0 and 2.14.1 by tests/checks/test_error_catalogue.

# engine: torch/autograd/__init__.py (_make_grads), on backward(gradient=...) / autograd.grad
GRAD_OUTPUT_SHAPE_ERROR = re.compile(
    r"Mismatch in shape: grad_output\[(?P<index>\d+)\] has a shape of (?P<given>torch\.Size\([^)]*\))"
    r" and output\[\d+\] has a shape of (?P<expected>torch\.Size\([^)]*\))"
)
"""The gradient handed to ``backward()``/``autograd.grad`` has another shape than its output."""

BATCHED_GRAD_SHAPE_ERROR = re.compile(
    r"If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
    r"batch dimension"
)
"""``is_grads_batched=True`` with grad_outputs lacking the batch dimension (same function)."""

COMPLEX_IMPLICIT_ERROR = re.compile(
    r"grad can be implicitly created only for real scalar outputs but got (?P<dtype>[\w.]+)"
)
"""``backward()`` without a gradient on a complex scalar (same function)."""

# engine: torch/csrc/autograd/python_engine.cpp (THPEngine_run_backward, autograd.grad inputs)
INPUT_WITHOUT_GRAD_ERROR = "One of the differentiated Tensors does not require grad"
"""``autograd.grad`` asked for the gradient of a tensor that does not require grad."""

# views: torch/csrc/autograd/variable.cpp (handle_view_on_rebase); the reasons follow the
# first sentence (a multi-output view, a view made under no_grad, a custom Function's output)
VIEW_INPLACE_ERROR = re.compile(
    r"Output (?P<output>\d+) of (?P<function>\w+) is a view and "
    r"(?:(?P<written>is being modified inplace)"
    r"|(?P<base>its base or another view of its base has been modified inplace))"
    r"|A view was created in no_grad mode and (?:is being|its base or another view of its base "
    r"has been) modified inplace with grad mode enabled"
)
"""An in-place write on (or through the base of) a view autograd cannot rebase."""

# why the view cannot be rebased, in the sentence after the first (same function)
MULTI_VIEW_TEXT = "is the output of a function that returns multiple views"
NO_GRAD_VIEW_TEXT = "was created in no_grad mode and is being modified inplace with grad mode"
CUSTOM_FUNCTION_VIEW_TEXT = "was created inside a custom Function"

# views: torch/csrc/autograd/VariableTypeManual.cpp (detach_)
DETACH_VIEW_ERROR = "Can't detach views in-place"
"""``detach_()`` on a view (a slice, a DDP gradient bucket view)."""

# custom Function: torch/csrc/autograd/python_function.cpp (_save_variables); a TypeError
SAVE_NON_TENSOR_ERROR = re.compile(
    r"save_for_backward can only save variables, but argument (?P<index>\d+) is of type "
    r"(?P<type>[\w.]+)"
)
"""``ctx.save_for_backward`` given something other than a tensor or None."""

# custom Function: torch/autograd/function.py (once_differentiable's DelayedError)
ONCE_DIFFERENTIABLE_ERROR = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)
"""A double backward through a Function whose backward is ``@once_differentiable``."""

# hooks: torch/_tensor.py (Tensor.register_hook / register_post_accumulate_grad_hook)
HOOK_WITHOUT_GRAD_ERROR = "cannot register a hook on a tensor that doesn't require gradient"
"""A tensor hook registered on a tensor that does not require grad."""

# checkpoint: torch/utils/checkpoint.py (_checkpoint_hook unpack / _StopRecomputationError)
CHECKPOINT_MISMATCH_ERROR = re.compile(
    r"torch\.utils\.checkpoint: (?P<what>A different number of tensors was saved|Recomputed "
    r"values for the following tensors have different metadata|trying to save more tensors "
    r"during recomputation)"
)
"""A non-reentrant checkpoint's recomputation saved other tensors than its forward."""

# checkpoint: torch/utils/checkpoint.py (CheckpointFunction.backward, use_reentrant=True)
REENTRANT_CHECKPOINT_GRAD_ERROR = re.compile(
    r"torch\.utils\.checkpoint is incompatible with \.grad\(\)"
)
"""A ``use_reentrant=True`` checkpoint differentiated by ``autograd.grad`` or ``inputs=``."""

CHECKPOINT_NO_GRAD_WARNING = "None of the inputs have requires_grad=True. Gradients will be None"
"""torch/utils/checkpoint.py (check_backward_validity): a reentrant checkpoint whose inputs
do not require grad; its output then has no graph (GP104 follows at backward)."""

# inference mode: aten/src/ATen/core/VariableHooksInterface / ADInplaceOrView (in-place) and
# c10/core/TensorImpl.cpp (set_requires_grad)
INFERENCE_OUTSIDE_ERROR = re.compile(
    r"(?P<inplace>Inplace update to inference tensor outside InferenceMode)"
    r"|(?P<flag>Setting requires_grad=True on inference tensor outside InferenceMode)"
)
"""An inference tensor written in place or made to require grad after its block."""

# torch.func: torch/_functorch/eager_transforms.py (grad_and_value)
FUNC_GRAD_NONSCALAR_ERROR = re.compile(
    r"grad_and_value\(f\)\(\*args\): Expected f\(\*args\) to return a scalar Tensor, got tensor "
    r"with (?P<dims>\d+) dims"
)
"""``torch.func.grad`` of a function that returns more than one element."""

# torch.func: aten/src/ATen/functorch (requires_grad_ under a grad transform)
AUTOGRAD_INSIDE_TRANSFORM_ERROR = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform"
)
"""``requires_grad_()`` (or autograd.functional) inside a ``torch.func`` transform."""

# AMP: torch/amp/grad_scaler.py (GradScaler.unscale_ / _unscale_grads_); the FP16 one is a
# ValueError
UNSCALE_TWICE_ERROR = "unscale_() has already been called on this optimizer since the last update()"
"""``GradScaler.unscale_`` called twice for one optimizer within one step."""

FP16_UNSCALE_ERROR = "Attempting to unscale FP16 gradients"
"""GradScaler given float16 parameters (a model converted with ``.half()``)."""

# DDP: torch/csrc/distributed/c10d/reducer.cpp (Reducer::prepare_for_forward and
# Reducer::mark_variable_ready)
DDP_UNFINISHED_REDUCTION_ERROR = (
    "Expected to have finished reduction in the prior iteration before starting a new one"
)
"""DistributedDataParallel: parameters that got no gradient in the previous iteration."""

DDP_READY_TWICE_ERROR = "Expected to mark a variable ready only once"
"""DistributedDataParallel: one parameter's gradient produced twice in one backward."""


# -- the error catalogue's worded entries (GP168), by entry key -----------------------------
# Each text is the static start of torch 2.13's message (gradprobe.checks._torch_messages
# lists where each is raised); a pattern where a name or number stands inside it.
WORDED_TEXTS: dict[str, str | re.Pattern[str]] = {
    # engine
    "derivative_not_implemented": re.compile(r"the derivative for '[^']+' is not implemented"),
    "anomaly_nan_in_backward": re.compile(
        r"Function '\w+' returned nan values in its \d+\w* output"
    ),
    "out_arg_requires_grad": re.compile(
        r"\w+\(\): functions with out=\.\.\. arguments don't support automatic differentiation, "
        r"but one of the arguments requires grad"
    ),
    "nondifferentiable_argument": re.compile(
        r"The function '\w+' is not differentiable with respect to argument '\w+'"
    ),
    "complex_autograd_unsupported": re.compile(
        r"\w+ does not support automatic differentiation for outputs with complex dtype"
    ),
    "qr_mode_r_backward": "The derivative of linalg.qr depends on Q, which is not computed when mode='r'",
    "retain_grad_without_grad": "can't retain_grad on Tensor that has requires_grad=False",
    "backward_grad_tensors_count": re.compile(r"got \d+ tensors and \d+ gradients"),
    "grad_tensors_type": "gradients can be either Tensors or None, but got",
    "grad_output_dtype_mismatch": (
        "For complex Tensors, both grad_output and output are required to have the same dtype"
    ),
    "saved_tensor_detached_inplace": "Trying to use a saved tensor that has been detached in-place",
    "resize_requires_grad": "cannot resize variables that require grad",
    "set_data_integer": (
        "data set to a tensor that requires gradients must be floating point or complex dtype"
    ),
    "set_data_incompatible": (
        "Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
        "incompatible tensor type"
    ),
    # setting .grad
    "grad_assign_type": "assigned grad expected to be a Tensor or None but got grad of type",
    "grad_assign_self": "can't assign Variable as its own grad",
    "grad_assign_shape": re.compile(
        r"attempting to assign a gradient of size '\[[\d, ]*\]' to a tensor of size"
    ),
    "grad_assign_dtype": re.compile(
        r"attempting to assign a gradient (?:with dtype '\w+' to a tensor with|to a tensor that "
        r"has data of a different type)"
    ),
    "grad_assign_device": re.compile(
        r"attempting to assign a gradient with device type '\w+' to a tensor with device type"
    ),
    "grad_dtype_non_leaf": re.compile(r"grad_dtype can only be (?:set|accessed) on leaf tensors"),
    # autograd.grad
    "empty_inputs": re.compile(r"`inputs` argument to `(?:backward|grad)\(\)` cannot be empty"),
    "grad_input_not_tensor": "all inputs have to be Tensors or GradientEdges, but got",
    "gradient_edge_without_grad": (
        "It is not possible to get the gradient edge for a Tensor that does not require gradients"
    ),
    "gradcheck_no_grad_inputs": (
        "gradcheck expects at least one input tensor to require gradient, but none of them have "
        "requires_grad=True"
    ),
    # hooks
    "hook_returned_non_tensor": re.compile(r"expected Variable, but hook returned '[\w.]+'"),
    "post_accumulate_hook_non_leaf": (
        "post accumulate grad hooks cannot be registered on non-leaf tensors"
    ),
    "post_accumulate_hook_return": "Tensor post accumulate grad hooks should return None",
    "unpack_hook_non_tensor": (
        "Output of saved tensor unpack_hook expected to be a Tensor but got result of type"
    ),
    # custom Function
    "custom_backward_non_tensor": re.compile(r"expected Variable or None \(got [\w.]+\)"),
    "custom_backward_missing": (
        "You must implement either the backward or vjp method for your custom autograd.Function"
    ),
    "legacy_function": "Legacy autograd function with non-static forward method is deprecated",
    "inplace_view_function_multiple_outputs": (
        "If your Function modifies inplace an input that is a view of another Tensor, your "
        "Function cannot return more than one Tensor"
    ),
    "full_hook_no_input_grad_return": (
        "Backward hook for Modules where no input requires gradient should always return None"
    ),
    "ddp_lazy_params": (
        "Modules with uninitialized parameters can't be used with `DistributedDataParallel`"
    ),
    "mark_dirty_not_returned": (
        "Some elements marked as dirty during the forward method were not returned as output"
    ),
    "saved_input_returned_as_is": (
        "An input that has been returned as-is as output is being saved for backward"
    ),
    "saved_tensors_accessed_twice": (
        "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True"
    ),
    "custom_jvp_missing": "You must implement the jvp function for custom autograd.Function",
    "custom_jvp_wrong_count": re.compile(
        r"Function's jvp returned an invalid number of forward gradients \(expected \d+ but got "
        r"\d+\)"
    ),
    # checkpoint
    "checkpoint_outputs_no_grad": (
        "none of output has requires_grad=True, this checkpoint() is not necessary"
    ),
    # inference mode
    "inference_view_inplace": "A view was created in inference mode and",
    # torch.func
    "backward_inside_func_transform": re.compile(
        r"backward\(\) called inside (?:a functorch transform|torch\.vmap)\. This is not supported"
    ),
    "func_grad_output_type": (
        "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got"
    ),
    "func_has_aux_format": (
        "output of function f should be a tuple: (output, aux) if has_aux is True"
    ),
    "func_output_type": re.compile(
        r": (?:Expected f to be a function that has non-empty output|expected f\(\*(?:primals|args)"
        r"\) to return only tensors|Expected output of f to be a (?:Tensor or Tensors|non-empty "
        r"tuple of Tensors))"
    ),
    "func_jvp_arguments": re.compile(
        r": Expected (?:primals to be a tuple\. |primals and tangents to have the same python "
        r"structure|\w+ to be a (?:non-empty )?tuple of Tensors|\w+ to contain at least one Tensor"
        r"|\w+ to only contain Tensors)"
    ),
    "func_vjp_integer_output": (
        "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor"
    ),
    "func_retain_grad": "You are attempting to call Tensor.retain_grad()",
    "func_data_mutation": "mutating directly with `.data` inside functorch transform is not allowed",
    "func_saved_tensor_hooks": "don't yet support saved tensor hooks",
    "func_custom_function_setup_context": (
        "In order to use an autograd.Function with functorch transforms"
    ),
    "custom_function_vmap": re.compile(
        r"You tried to vmap over \w+, but it does not have vmap support|To use autograd\.Function "
        r"with vmap, you must either override the vmap staticmethod"
    ),
    # forward-mode AD
    "forward_ad_not_implemented": re.compile(
        r"Trying to use forward AD with \w+ that does not support it because it has not been "
        r"implemented yet"
    ),
    "make_dual_without_level": "Trying to create a dual Tensor for forward AD but no level exists",
    "nested_dual_level": "Nested forward mode AD is not supported at the moment",
    "dual_tangent_shape": (
        "Trying to set a forward gradient that has a different size than that of the original "
        "Tensor"
    ),
    "dual_tangent_is_dual": (
        "Setting a forward grad that itself has a forward gradient at the same level"
    ),
    "dual_integer": re.compile(
        r"Expected (?:primal|tangent) to be floating point or complex, but got"
    ),
    "resize_dual": "cannot resize variables that has a forward grad",
    # autograd.functional
    "functional_inputs_type": re.compile(
        r"The \w+ given to \w+ must be either a Tensor or a tuple of Tensors but the"
    ),
    "functional_v_missing": "The vector v can only be None if the",
    "functional_v_shape": re.compile(
        r"v is a tuple of invalid length: should be|The given v should contain a single Tensor"
        r"|v has invalid size: should be"
    ),
    "functional_hessian_output": re.compile(
        r"The (?:function|Tensor returned by the function) given to (?:hessian|vhp|hvp) should "
        r"(?:return a single Tensor|contain a single element)"
    ),
    # optimizer
    "optimizer_non_leaf": "can't optimize a non-leaf Tensor",
    "optimizer_empty_params": "optimizer got an empty parameter list",
    "optimizer_params_type": re.compile(
        r"params argument given to the optimizer should be an iterable of Tensors or dicts"
        r"|optimizer can only optimize Tensors, but one of the params is"
        r"|param_group must be a dict, but got"
    ),
    "optimizer_param_in_two_groups": "some parameters appear in more than one parameter group",
    "optimizer_state_dict_mismatch": re.compile(
        r"loaded state dict (?:has a different number of parameter groups|contains a parameter "
        r"group that doesn't match the size of optimizer's group)"
    ),
    "clip_grad_nonfinite": re.compile(
        r"The total norm of order \S+ for gradients from `parameters` is non-finite, so it cannot "
        r"be clipped"
    ),
    # AMP
    "scaler_without_scale": re.compile(r"Attempted \w+ but _scale is None"),
    "scaler_no_inf_checks": "No inf checks were recorded for this optimizer",
    "scaler_update_without_step": "No inf checks were recorded prior to update",
    "scaler_step_twice": "step() has already been called since the last update()",
    "unscale_after_step": "unscale_() is being called after step()",
    # leaving autograd
    "numpy_requires_grad": "Can't call numpy() on Tensor that requires grad",
    "dlpack_requires_grad": "Can't export tensors that require gradient, use tensor.detach()",
    "python_map_requires_grad": re.compile(
        r"Can't call (?:apply_|map_|map2_)\(\) on Variable that requires grad"
    ),
    # gradcheck (torch/autograd/gradcheck.py: GradcheckError and its input checks)
    "gradcheck_jacobian_mismatch": "Jacobian mismatch for output",
    "gradcheck_not_reentrant": "Backward is not reentrant",
    "gradcheck_grad_output_ignored": "backward not multiplied by grad_output",
    "gradcheck_overlapping_input": re.compile(r"input has a dimension with stride 0\. gradcheck"),
    # custom Function: what forward declared on ctx, and its class (custom_function.cpp,
    # python_function.cpp, torch/autograd/function.py)
    "ctx_mark_non_differentiable_non_tensor": (
        "mark_non_differentiable only accepts variable arguments"
    ),
    "ctx_mark_dirty_non_tensor": "mark_dirty can only accept variables",
    "custom_forward_missing": "You must implement the forward function for custom autograd.Function",
    "custom_backward_and_vjp": "Implementing both 'backward' and 'vjp' for a custom Function",
    "save_for_forward_non_tensor": "save_for_forward expects all arguments to be tensors",
    # hooks: what a node or module hook returned, where hooks were registered
    # (python_hook.cpp, saved_variable.cpp, torch/nn/modules/module.py)
    "node_hook_returned_non_tuple": re.compile(r"expected tuple, but hook returned '\w+'"),
    "node_hook_arity": re.compile(r"hook '[^']*' has returned an incorrect number of values"),
    "hook_replaces_none_grad": "can't replace a None gradient with a non-None value",
    "forward_pre_hook_return": (
        "forward pre-hook must return None or a tuple of (new_args, new_kwargs)"
    ),
    "mixed_backward_hooks": (
        "Cannot use both regular backward hooks and full backward hooks on a single Module"
    ),
    "pack_hook_inplace": "A saved tensor pack hook is modifying its input in place",
    # autograd.functional's strict mode (torch/autograd/functional.py)
    "functional_strict_independent": re.compile(
        r"(?:Output \d+ of the user-provided function|The \w+ of the user-provided function)"
        r" is independent of (?:input|entry)"
    ),
    "functional_strict_no_grad": re.compile(
        r"Output \d+ of the user-provided function does not require gradients"
    ),
    "functional_strategy": re.compile(
        r"torch\.autograd\.functional\.jacobian: `\w+=\w+` and `\w+=[\w\"-]+` are not "
        r"supported together"
    ),
    # leaving autograd and AMP (torch/_tensor.py, torch/amp/grad_scaler.py)
    "deepcopy_non_leaf": (
        "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol"
    ),
    "scaler_closure": "Closure use is not currently supported if GradScaler is enabled",
    # forward-mode AD and torch.func (forward_ad.py, VariableTypeManual.cpp, eager_transforms.py)
    "make_dual_twice": (
        "Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
        "level"
    ),
    "func_jvp_strict": "The output of f is independent of the inputs. This is not allowed with",
    "func_vjp_cotangent_structure": (
        "Expected pytree structure of cotangents to be the same as pytree structure of outputs"
    ),
    # hooks on optimizers and saved tensors (torch/optim/optimizer.py, autograd/graph.py)
    "optimizer_hook_return": re.compile(
        r"\S+ must return None or a tuple of \(new_args, new_kwargs\), but got"
    ),
    "allow_mutation_backward_outside": (
        "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    ),
    # what a custom Function's backward or jvp returned (engine.cpp, custom_function.cpp)
    "complex_grad_for_real_input": (
        "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex)"
    ),
    "custom_jvp_not_view": re.compile(
        r"A custom Function('s forward)? is returning a view .*but the jvp is not returning a "
        r"view"
    ),
    "custom_jvp_not_inplace": re.compile(
        r"An inplace custom Function is not (?:modifying|returning) the forward mode gradients"
    ),
    # saved tensors' own hooks (saved_variable.cpp)
    "saved_tensor_register_hooks_twice": (
        "Calling register_hooks on a saved tensor whose hooks have already been set"
    ),
    "saved_tensor_register_hooks_freed": (
        "Calling register_hooks on a saved tensor after it has been freed"
    ),
}

# -- the catalogue's warnings that mean a bug (GP169), by entry key --------------------------
# The static start of torch 2.13's warning text (gradprobe.checks._torch_messages lists where
# each is warned); warnings correct code also triggers are left out there, with the reason.
WARNED_TEXTS: dict[str, str | re.Pattern[str]] = {
    "backward_create_graph_cycle": (
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient"
    ),
    "checkpoint_no_grad_inputs": "None of the inputs have requires_grad=True. Gradients will be None",
    "optimizer_duplicate_params": (
        "optimizer contains a parameter group with duplicate parameters"
    ),
    "scheduler_before_optimizer": (
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`"
    ),
    "scheduler_get_lr": (
        "To get the last learning rate computed by the scheduler, please use `get_last_lr()`"
    ),
    "mark_dirty_not_input": "ctx.mark_dirty() received a tensor that was not an input",
}
"""Message texts of the catalogue's entries explained in words, keyed by entry."""

# -- version gates ------------------------------------------------------------------------------


def checkpoint_generator_names() -> tuple[str, ...]:
    """The ``torch.utils.checkpoint`` functions a non-reentrant ``checkpoint()`` calls with
    the user's function first, looked up as module globals at each call: 2.13 calls
    ``_checkpoint_without_reentrant_generator(fn, ...)``, 2.14 calls
    ``_checkpoint_without_reentrant_generator_impl(fn, args, kwargs, ...)`` (the first
    became a shim for it). Empty if this torch has neither."""
    from torch.utils import checkpoint

    names = (
        "_checkpoint_without_reentrant_generator_impl",
        "_checkpoint_without_reentrant_generator",
    )
    return tuple(name for name in names if callable(getattr(checkpoint, name, None)))


def node_creation_hook() -> Callable[[Callable[[Any], None]], Any] | None:
    """``torch.autograd.graph.node_creation_hook`` (torch >= 2.14: every autograd node as it
    is made), or None on older torch."""
    return getattr(torch.autograd.graph, "node_creation_hook", None)


# -- torch.compile regions ------------------------------------------------------------------------

_MODULE_PATH = re.compile(r"""^L\['[^']*'\]\.?""")
_RESUMED = re.compile(r"torch_dynamo_resume_in_(\w+?)_at_(\d+)$")


def compiled_region(node: Any) -> dict[str, str]:
    """What a ``CompiledFunctionBackward`` node (a ``torch.compile`` region, aot backends)
    says of where it came from: ``forward`` (the compiled function, ``Net.forward``),
    ``source`` (``file.py:12``) and ``modules`` (the submodules whose operations it holds,
    ``fc1, fc2``); empty when torch keeps none of it.

    Read from private AOTAutograd state (checked on torch 2.13 and 2.14): the backward
    graph the node will run (``_lazy_backward_info.bw_module``, whose nodes carry
    ``fwd_nn_module_stack``) and the code objects dynamo traced (``saved_context.traced_code``).
    """
    found: dict[str, str] = {}
    try:
        info = node._forward_cls._lazy_backward_info
    except Exception:  # noqa: BLE001  (another torch, another backend)
        return found
    context = getattr(info, "saved_context", None)
    codes = getattr(context, "traced_code", None) or ()
    if codes:
        code = codes[0]
        qualname = str(getattr(code, "co_qualname", code.co_name)).rsplit("<locals>.", 1)[-1]
        found["forward"] = resumed_name(qualname, r"\1 after the graph break at line \2")
        found["source"] = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    graph = getattr(getattr(info, "bw_module", None), "graph", None)
    modules: dict[str, None] = {}
    for fx_node in getattr(graph, "nodes", ()):
        meta = getattr(fx_node, "meta", {})
        stack = meta.get("fwd_nn_module_stack") or meta.get("nn_module_stack") or {}
        if isinstance(stack, dict) and stack:
            path = list(stack.values())[-1][0]
            if isinstance(path, str):
                modules[_MODULE_PATH.sub("", path) or path] = None
    if modules:
        found["modules"] = ", ".join(sorted(modules))
    return found


def resumed_name(name: str, template: str = r"\1") -> str:
    """The user's function behind a function dynamo made to resume after a graph break
    (``torch_dynamo_resume_in_forward_at_8`` -> ``forward``; ``template`` may also use the
    line, ``\2``); any other name unchanged."""
    return _RESUMED.sub(template, name)
