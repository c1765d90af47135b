"""The catalogue's entries with a finding code of their own: a check reads the recording
for the lines behind each (GP101-GP164)."""

from __future__ import annotations

from gradprobe import _compat as t
from gradprobe.checks._catalogue.entry import Entry

__all__ = ["DEDICATED"]

_E = Entry

DEDICATED: tuple[Entry, ...] = (
    # -- engine --------------------------------------------------------------------------
    _E(
        "backward_twice",
        "engine",
        t.FREED_ERROR,
        "GP103",
        "Trying to backward through the graph a second time",
        "the first backward() through the graph (retain_graph=True there, or a fresh forward)",
        ("cause", "error"),
    ),
    _E(
        "nonscalar_backward",
        "engine",
        t.NONSCALAR_ERROR,
        "GP105",
        "grad can be implicitly created only for scalar outputs",
        "the line that made the non-scalar tensor (reduce it there)",
        ("cause", "error"),
    ),
    _E(
        "complex_backward",
        "engine",
        t.COMPLEX_IMPLICIT_ERROR,
        "GP150",
        "grad can be implicitly created only for real scalar outputs but got torch.complex64",
        "the line that made the complex loss (take .abs() or .real there)",
        ("cause", "error"),
    ),
    _E(
        "no_grad_fn_nograd_block",
        "engine",
        t.NO_GRAD_FN_ERROR,
        "GP104",
        "element 0 of tensors does not require grad and does not have a grad_fn",
        "the torch.no_grad() block the loss's values came through",
        ("cause", "created", "error"),
    ),
    _E(
        "no_grad_fn_plain",
        "engine",
        t.NO_GRAD_FN_ERROR,
        "GP104",
        "element 0 of tensors does not require grad and does not have a grad_fn",
        "no line to change is known: the finding points at the backward() call (`error`)",
        ("error",),
    ),
    _E(
        "version_counter",
        "engine",
        t.VERSION_ERROR,
        "GP101",
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation",
        "the in-place write (the op that saved the tensor and the backward are context)",
        ("cause", "saved", "error"),
    ),
    _E(
        "leaf_inplace",
        "engine",
        t.LEAF_INPLACE_ERROR,
        "GP102",
        "a leaf Variable that requires grad is being used in an in-place operation.",
        "the in-place write on the leaf",
    ),
    _E(
        "leaf_moved_interior",
        "engine",
        t.LEAF_INPLACE_ERROR,
        "GP102",
        "leaf variable has been moved into the graph interior",
        "the in-place write that turned the leaf into a non-leaf",
        ("cause", "error"),
    ),
    _E(
        "nonleaf_requires_grad",
        "engine",
        t.NON_LEAF_FLAG_ERROR,
        "GP126",
        "you can only change requires_grad flags of leaf variables.",
        "the line that sets requires_grad",
    ),
    _E(
        "integer_requires_grad",
        "engine",
        t.INTEGER_GRAD_ERROR,
        "GP125",
        "Only Tensors of floating point and complex dtype can require gradients",
        "the line that asks an integer tensor for gradients",
    ),
    _E(
        "integer_parameter",
        "engine",
        t.INTEGER_GRAD_ERROR,
        "GP125",
        "Only Tensors of floating point and complex dtype can require gradients",
        "the nn.Parameter(...) of an integer tensor",
    ),
    _E(
        "grad_output_shape",
        "engine",
        t.GRAD_OUTPUT_SHAPE_ERROR,
        "GP149",
        "Mismatch in shape: grad_output[0] has a shape of torch.Size([4]) and output[0] has a "
        "shape of torch.Size([3])",
        "the backward(gradient) call (the output is context)",
        ("cause", "created", "error"),
    ),
    # -- views -------------------------------------------------------------------------
    _E(
        "view_of_leaf_inplace",
        "views",
        t.LEAF_INPLACE_ERROR,
        "GP102",
        "a view of a leaf Variable that requires grad is being used in an in-place operation.",
        "the in-place write on the view",
    ),
    _E(
        "multi_view_inplace",
        "views",
        t.VIEW_INPLACE_ERROR,
        "GP124",
        "Output 0 of SplitBackward0 is a view and is being modified inplace. This view is the "
        "output of a function that returns multiple views.",
        "the in-place write on the view",
    ),
    _E(
        "multi_view_base_modified",
        "views",
        t.VIEW_INPLACE_ERROR,
        "GP124",
        "Output 0 of UnbindBackward0 is a view and its base or another view of its base has "
        "been modified inplace.",
        "the in-place write on the base (not the later use of the view, where torch raises)",
        ("cause", "error"),
    ),
    _E(
        "no_grad_view_inplace",
        "views",
        t.VIEW_INPLACE_ERROR,
        "GP124",
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled.",
        "the in-place write on the view",
    ),
    _E(
        "custom_function_view_inplace",
        "views",
        t.VIEW_INPLACE_ERROR,
        "GP124",
        "Output 0 of IdentityBackward is a view and is being modified inplace. This view was "
        "created inside a custom Function",
        "the in-place write on the Function's output",
    ),
    _E(
        "detach_view",
        "views",
        t.DETACH_VIEW_ERROR,
        "GP158",
        "Can't detach views in-place. Use detach() instead.",
        "the detach_() call",
    ),
    # -- custom Function -----------------------------------------------------------------
    _E(
        "custom_wrong_count",
        "custom Function",
        t.CUSTOM_RETURN_ERROR,
        "GP138",
        "function ScaleBackward returned an incorrect number of gradients (expected 2, got 1)",
        "the backward's return line",
        ("cause", "created", "error"),
    ),
    _E(
        "custom_wrong_shape",
        "custom Function",
        t.CUSTOM_RETURN_ERROR,
        "GP138",
        "Function SumAllBackward returned an invalid gradient at index 0 - got [] but expected "
        "shape compatible with [3]",
        "the backward's return line",
        ("cause", "created", "error"),
    ),
    _E(
        "save_non_tensor",
        "custom Function",
        t.SAVE_NON_TENSOR_ERROR,
        "GP152",
        "save_for_backward can only save variables, but argument 1 is of type float",
        "the ctx.save_for_backward(...) line",
        ("cause", "error"),
    ),
    _E(
        "mark_dirty_leaf",
        "custom Function",
        t.LEAF_INPLACE_ERROR,
        "GP102",
        "a leaf Variable that requires grad has been used in an in-place operation.",
        "the apply() that hands the leaf to an in-place Function",
    ),
    _E(
        "once_differentiable",
        "custom Function",
        t.ONCE_DIFFERENTIABLE_ERROR,
        "GP153",
        "trying to differentiate twice a function that was marked with @once_differentiable",
        "the @once_differentiable decorator (the double backward is the error)",
        ("cause", "error"),
    ),
    # -- hooks -------------------------------------------------------------------------
    _E(
        "hook_changed_shape",
        "hooks",
        t.HOOK_CHANGED_ERROR,
        "GP307",
        "hook 'hook' has changed the size of value",
        "the hook's return line (registered and error lines are context)",
        ("cause", "registered", "error"),
    ),
    _E(
        "hook_changed_type",
        "hooks",
        t.HOOK_CHANGED_ERROR,
        "GP307",
        "hook 'hook' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)",
        "the hook's return line",
        ("cause", "registered", "error"),
    ),
    _E(
        "hook_without_grad",
        "hooks",
        t.HOOK_WITHOUT_GRAD_ERROR,
        "GP154",
        "cannot register a hook on a tensor that doesn't require gradient",
        "the register_hook call",
    ),
    _E(
        "backward_hook_arity",
        "hooks",
        t.HOOK_ARITY_ERROR,
        "GP308",
        "Backward hook returned an invalid number of grad_input, got 2, but expected 1",
        "the hook's return line",
        ("cause", "error"),
    ),
    _E(
        "backward_pre_hook_arity",
        "hooks",
        t.HOOK_ARITY_ERROR,
        "GP308",
        "Backward pre hook returned an invalid number of grad_output, got 2, but expected 1",
        "the hook's return line",
        ("cause", "error"),
    ),
    _E(
        "hooked_output_inplace",
        "hooks",
        t.INPLACE_VIEW_ERROR,
        "GP305",
        "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace.",
        "the register_full_backward_hook call (the in-place write is the error)",
        ("cause", "error"),
    ),
    # -- autograd.grad -----------------------------------------------------------------
    _E(
        "grad_unused_input",
        "autograd.grad",
        t.UNUSED_INPUT_ERROR,
        "GP140",
        "The differentiated Tensor at index 1 appears to not have been used in the graph. Set "
        "allow_unused=True if this is the desired behavior.",
        "the autograd.grad call (where the unused tensor was made is context)",
        ("cause", "created", "error"),
    ),
    _E(
        "grad_input_without_grad",
        "autograd.grad",
        t.INPUT_WITHOUT_GRAD_ERROR,
        "GP151",
        "One of the differentiated Tensors does not require grad",
        "the line that made the input without requires_grad=True (the autograd.grad call when the input is built inline)",
        ("cause", "error"),
    ),
    _E(
        "grads_batched_shape",
        "autograd.grad",
        t.BATCHED_GRAD_SHAPE_ERROR,
        "GP149",
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
        "the batch dimension.",
        "the autograd.grad call",
        ("cause", "created", "error"),
    ),
    _E(
        "grad_without_create_graph",
        "autograd.grad",
        t.NO_GRAD_FN_ERROR,
        "GP104",
        "element 0 of tensors does not require grad and does not have a grad_fn",
        "the autograd.grad call without create_graph=True (the second backward is the error)",
        ("cause", "error"),
    ),
    # -- checkpoint --------------------------------------------------------------------
    _E(
        "checkpoint_count_mismatch",
        "checkpoint",
        t.CHECKPOINT_MISMATCH_ERROR,
        "GP155",
        "torch.utils.checkpoint: A different number of tensors was saved during the original "
        "forward and recomputation.",
        "the line of the checkpointed function (or a function it calls) that makes a second run "
        "differ: a write to state kept across calls, a Python or NumPy random draw; else its "
        "def line (the backward is the error)",
        ("cause", "error"),
    ),
    _E(
        "checkpoint_metadata_mismatch",
        "checkpoint",
        t.CHECKPOINT_MISMATCH_ERROR,
        "GP155",
        "torch.utils.checkpoint: Recomputed values for the following tensors have different "
        "metadata than during the forward pass.",
        "the line of the checkpointed function (or a function it calls) that makes a second run "
        "differ: a write to state kept across calls, a Python or NumPy random draw; else its "
        "def line",
        ("cause", "error"),
    ),
    _E(
        "checkpoint_reentrant_grad",
        "checkpoint",
        t.REENTRANT_CHECKPOINT_GRAD_ERROR,
        "GP156",
        "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
        "passing an `inputs` parameter to .backward().",
        "the autograd.grad call (or pass use_reentrant=False to the checkpoint)",
    ),
    _E(
        "checkpoint_reentrant_no_grad",
        "checkpoint",
        t.NO_GRAD_FN_ERROR,
        "GP104",
        "None of the inputs have requires_grad=True. Gradients will be None (warning), then "
        "element 0 of tensors does not require grad",
        "the checkpoint(..., use_reentrant=True) call",
        ("cause", "created", "error"),
    ),
    # -- inference mode ----------------------------------------------------------------
    _E(
        "inference_saved",
        "inference mode",
        t.INFERENCE_SAVED_ERROR,
        "GP114",
        "Inference tensors cannot be saved for backward.",
        "the torch.inference_mode() block that made the tensor",
        ("cause", "created", "error"),
    ),
    _E(
        "inference_inplace",
        "inference mode",
        t.INFERENCE_OUTSIDE_ERROR,
        "GP157",
        "Inplace update to inference tensor outside InferenceMode is not allowed.",
        "the in-place write after the block",
    ),
    _E(
        "inference_requires_grad",
        "inference mode",
        t.INFERENCE_OUTSIDE_ERROR,
        "GP157",
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
        "the line that sets requires_grad",
    ),
    # -- torch.func --------------------------------------------------------------------
    _E(
        "func_grad_nonscalar",
        "torch.func",
        t.FUNC_GRAD_NONSCALAR_ERROR,
        "GP159",
        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
        "with 1 dims.",
        "the torch.func.grad call",
    ),
    _E(
        "func_requires_grad",
        "torch.func",
        t.AUTOGRAD_INSIDE_TRANSFORM_ERROR,
        "GP160",
        "You are attempting to call Tensor.requires_grad_() (or perhaps using "
        "torch.autograd.functional.* APIs) inside of a function being transformed by a "
        "functorch transform.",
        "the requires_grad_() inside the transformed function",
    ),
    # -- AMP ---------------------------------------------------------------------------
    _E(
        "unscale_twice",
        "AMP",
        t.UNSCALE_TWICE_ERROR,
        "GP161",
        "unscale_() has already been called on this optimizer since the last update().",
        "the second scaler.unscale_ call",
    ),
    _E(
        "unscale_fp16",
        "AMP",
        t.FP16_UNSCALE_ERROR,
        "GP162",
        "Attempting to unscale FP16 gradients.",
        "the model.half() (or .to(torch.float16)) that made the parameters 16-bit, when the "
        "recording saw it; else the scaler.step / unscale_ call",
        ("cause", "error"),
    ),
    # -- DDP ---------------------------------------------------------------------------
    _E(
        "ddp_unused_parameters",
        "DDP",
        t.DDP_UNFINISHED_REDUCTION_ERROR,
        "GP163",
        "Expected to have finished reduction in the prior iteration before starting a new one.",
        "the line that made the layer whose parameters got no gradient (the wrapper line, where find_unused_parameters=True goes, is in the message)",
        ("cause", "error"),
    ),
    _E(
        "ddp_ready_twice",
        "DDP",
        t.DDP_READY_TWICE_ERROR,
        "GP164",
        "Expected to mark a variable ready only once.",
        "the reentrant checkpoint(...) calls in the model, or the backward that ran again "
        "through one forward (retain_graph=True); else the DistributedDataParallel(...) line "
        "(the backward is the error)",
        ("cause", "error"),
    ),
)
