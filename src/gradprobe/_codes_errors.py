"""The texts of the GP1xx codes numbered after ``_codes.py``'s: the torch errors the error
catalogue added (GP149-GP164; see ``gradprobe.checks._catalogue``) and later additions
(GP165, a step on gradients autograd.grad returned), kept apart so ``_codes.py`` stays one
screenful per family and the codes stay in numeric order. Plain tuples ``(code, kind, title, explanation, hint)``: ``_codes.py`` makes them
:class:`~gradprobe._codes.Code` entries in the GP1xx section."""

from __future__ import annotations

__all__ = ["ERROR_CATALOGUE_CODES"]

Entry = tuple[str, str, str, str, str]


def _entry(code: str, kind: str, title: str, explanation: str, hint: str) -> Entry:
    return (code, kind, title, explanation, hint)


ERROR_CATALOGUE_CODES: tuple[tuple[str, str, str, str, str], ...] = (
    _entry(
        "GP149",
        "grad_output_shape_mismatch",
        "the gradient given to backward() does not fit its output",
        "backward(gradient) and autograd.grad(outputs, inputs, grad_outputs) start from the "
        "gradients they are given, one per output and of that output's shape (with "
        "is_grads_batched=True, one more leading batch dimension). A gradient of another shape "
        "is refused before anything runs.",
        "Pass one gradient per output, shaped like it: out.backward(torch.ones_like(out)); with "
        "is_grads_batched=True stack the gradients along a new first dimension.",
    ),
    _entry(
        "GP150",
        "complex_backward_without_gradient",
        "backward() without a gradient on a complex value",
        "backward() with no argument starts from 1.0, which is defined only for a real scalar. "
        "A complex loss has no single direction to descend: autograd refuses it.",
        "Make the loss real before backward(): loss.abs(), loss.real, or (z * z.conj()).real "
        "for a squared magnitude.",
    ),
    _entry(
        "GP151",
        "grad_of_tensor_without_grad",
        "autograd.grad was asked for a tensor that does not require grad",
        "torch.autograd.grad(outputs, inputs) computes gradients with respect to tensors that "
        "require grad. An input made without requires_grad=True (a plain tensor, a detached "
        "copy, a value computed under no_grad) has no place in any graph.",
        "Create the input with requires_grad=True (or call x.requires_grad_() before the "
        "forward that uses it), or leave it out of the inputs.",
    ),
    _entry(
        "GP152",
        "save_for_backward_non_tensor",
        "ctx.save_for_backward was given something that is not a tensor",
        "save_for_backward keeps tensors (and None) with their version counters so backward "
        "can check them; numbers, flags, shapes and modules cannot be saved that way.",
        "Keep non-tensor values as ctx attributes (ctx.scale = scale) and save only tensors "
        "with ctx.save_for_backward(x, w).",
    ),
    _entry(
        "GP153",
        "once_differentiable_double_backward",
        "a double backward reached a @once_differentiable backward",
        "@once_differentiable runs a custom Function's backward under no_grad, so its result "
        "has no graph. Differentiating it again (create_graph=True then a second backward, a "
        "gradient penalty, a Hessian) reaches that Function and fails.",
        "Remove @once_differentiable and write backward with differentiable torch ops, or "
        "keep the Function out of the part of the model that is differentiated twice.",
    ),
    _entry(
        "GP154",
        "hook_on_tensor_without_grad",
        "a hook was registered on a tensor that does not require grad",
        "Tensor hooks run when the tensor's gradient is computed; a tensor that does not "
        "require grad never gets one, so torch refuses the registration.",
        "Register the hook on a tensor that requires grad (a parameter, an activation computed "
        "from one), or make the tensor require grad first.",
    ),
    _entry(
        "GP155",
        "checkpoint_recomputation_differs",
        "a checkpointed function computed something else when it was recomputed",
        "A non-reentrant torch.utils.checkpoint runs its function twice: once in forward, and "
        "again during backward to rebuild what it did not keep. The two runs must save the "
        "same tensors. State that changes between them (a counter, a Python random draw, a "
        "branch on a global or on the module's mode, a cache filled on the first call) makes "
        "the recomputation differ and backward stops.",
        "Make the checkpointed function depend only on its arguments: pass the state in as an "
        "argument, draw random numbers with torch (checkpoint restores torch's RNG state), "
        "and do not change module modes between forward and backward.",
    ),
    _entry(
        "GP156",
        "reentrant_checkpoint_with_grad",
        "a reentrant checkpoint was differentiated with autograd.grad",
        "checkpoint(..., use_reentrant=True) runs its own backward inside the outer one and "
        "only supports plain loss.backward(): torch.autograd.grad or backward(inputs=...) "
        "cannot pass through it.",
        "Use checkpoint(..., use_reentrant=False), which supports autograd.grad and inputs=.",
    ),
    _entry(
        "GP157",
        "inference_tensor_changed_outside",
        "an inference tensor was changed outside inference_mode",
        "Tensors made under torch.inference_mode() have no version counter and no autograd "
        "metadata. Outside the block they can be read, but not written in place or made to "
        "require grad.",
        "Make the tensor under torch.no_grad() instead, or take a normal copy after the block "
        "(t = t.clone()) before writing to it or setting requires_grad.",
    ),
    _entry(
        "GP158",
        "detach_view_inplace",
        "detach_() was called on a view",
        "detach_() turns a tensor into a leaf in place; a view (a slice, a reshape, a "
        "gradient bucket view of DistributedDataParallel) shares its base's autograd history "
        "and cannot be detached alone.",
        "Use the out-of-place detach(): v = v.detach(). To clear gradients use "
        "optimizer.zero_grad(set_to_none=True) or p.grad = None.",
    ),
    _entry(
        "GP159",
        "func_grad_nonscalar",
        "torch.func.grad was given a function that returns more than one value",
        "torch.func.grad(f) differentiates a function that returns a single-element tensor, "
        "like backward() without a gradient. A vector output needs a vector-Jacobian product "
        "or a full Jacobian.",
        "Reduce the output inside f (return loss.sum() or .mean()), or use torch.func.vjp / "
        "jacrev for vector outputs.",
    ),
    _entry(
        "GP160",
        "autograd_inside_func_transform",
        "requires_grad_() was called inside a torch.func transform",
        "torch.func.grad, vjp, jacrev and vmap track gradients themselves; inside the "
        "transformed function the inputs are wrapped tensors, and turning requires_grad on "
        "(or calling torch.autograd.functional) there is not supported.",
        "Drop the requires_grad_() inside the function (the transform already differentiates "
        "with respect to its argnums), or call it outside the transform.",
    ),
    _entry(
        "GP161",
        "unscale_called_twice",
        "GradScaler.unscale_ ran twice for one optimizer step",
        "scaler.unscale_(optimizer) divides the optimizer's gradients by the loss scale once per "
        "step; a second call before scaler.update() would divide them again, so torch refuses "
        "it. scaler.step() unscales by itself when unscale_ was not called.",
        "Call scaler.unscale_(optimizer) at most once between scaler.scale(loss).backward() "
        "and scaler.update(), right before clipping; drop the other call.",
    ),
    _entry(
        "GP162",
        "half_parameters_with_grad_scaler",
        "GradScaler was given float16 parameters",
        "GradScaler is made for mixed precision: float32 parameters, with autocast running "
        "some ops in float16. Parameters converted to float16 (model.half()) get float16 "
        "gradients, which unscaling cannot handle safely, and an optimizer updating float16 "
        "weights loses small updates.",
        "Keep the model in float32 and run the forward under torch.autocast(device_type, "
        "dtype=torch.float16) instead of calling .half().",
    ),
    _entry(
        "GP163",
        "ddp_unused_parameters",
        "DistributedDataParallel parameters got no gradient in the previous iteration",
        "DistributedDataParallel waits for a gradient of every parameter before it reduces "
        "them across processes. A parameter the forward did not use (a branch skipped, a head "
        "of another task, an unused layer) never reports one, so the reduction of that "
        "iteration never finished and the next forward refuses to start.",
        "Pass find_unused_parameters=True to DistributedDataParallel, or remove (or freeze "
        "with requires_grad_(False)) the parameters the forward does not use.",
    ),
    _entry(
        "GP164",
        "ddp_variable_ready_twice",
        "a DistributedDataParallel parameter produced its gradient twice in one backward",
        "DistributedDataParallel counts one gradient per parameter per backward. A reentrant "
        "checkpoint around shared layers, a parameter used outside forward, or several "
        "forward passes feeding one backward make a parameter report twice.",
        "Use checkpoint(..., use_reentrant=False), call the wrapped model once per backward, "
        "or pass static_graph=True when the graph is the same in every iteration.",
    ),
    _entry(
        "GP165",
        "gradients_returned_not_stored",
        "an optimizer stepped on no gradient: torch.autograd.grad returned them instead",
        "torch.autograd.grad returns the gradients it computes and leaves every .grad as it "
        "was; optimizer.step() only applies .grad. A loop that computes gradients with "
        "autograd.grad and then steps, with no backward() in between, steps on parameters "
        "that hold no gradient: nothing is updated, and nothing says so.",
        "Store them before the step (for p, g in zip(params, grads): p.grad = g), or call "
        "loss.backward() instead of torch.autograd.grad.",
    ),
    _entry(
        "GP166",
        "learning_rate_collapsed",
        "a learning-rate schedule drove the learning rate to nothing while training went on",
        "A scheduler multiplies the initial learning rate by a factor that falls with its "
        "own step count. A schedule whose step_size, milestones or gamma count epochs, "
        "stepped every batch, decays as many times faster as an epoch has batches; within "
        "an epoch or two the learning rate is a millionth of its start and the steps after "
        "that leave the weights as they were. The loss flattens and nothing raises.",
        "Call scheduler.step() once per epoch (after the batch loop), or give the schedule "
        "its parameters in batches (step_size, milestones, T_max).",
    ),
    _entry(
        "GP167",
        "optimizer_never_stepped",
        "an optimizer zeroes the gradients computed for it and never steps",
        "optimizer.zero_grad() and a backward() that fills its parameters' gradients run "
        "every iteration, but its step() is never called: a line lost in a refactor, or the "
        "second optimizer of a GAN forgotten. The gradients are computed and thrown away, "
        "the parameters never change, and the loss that trains them stays flat.",
        "Call optimizer.step() right after the backward() that computes its gradients.",
    ),
    _entry(
        "GP168",
        "torch_error",
        "torch refused what the code asked: what it means, and the line to change",
        "The recorded code raised an error that no dedicated check explains with the "
        "recording. When it is one of the messages the error catalogue explains in words, "
        "the finding says what it means and how to fix it; for any other exception, what "
        "was raised and where. Either way the line to change comes from the traceback: code "
        "that backward() ran (a custom Function's backward, a hook) when the error came from "
        "there; the torch call that refused its arguments; or the line that made the "
        "autograd node (or the tensor) torch's message is about.",
        "Change the line named as the cause; the catalogue (docs/errors.md) lists every "
        "message gradprobe knows and what it means.",
    ),
    _entry(
        "GP169",
        "torch_warning",
        "torch warned about a mistake and went on",
        "torch raises an error for some mistakes and only warns about others: a reentrant "
        "checkpoint whose inputs need no gradient (its parameters never train), a parameter "
        "listed twice in an optimizer (updated twice per step), a scheduler stepped before "
        "its optimizer (every step uses the next step's learning rate). The run goes on and trains wrongly while the "
        "warning scrolls past. gradprobe keeps the warnings of its catalogue that correct "
        "code does not trigger and names the line to change.",
        "Change the line named as the cause; the catalogue (docs/errors.md) lists the "
        "warnings gradprobe reports and those it leaves alone, with the reason.",
    ),
)
