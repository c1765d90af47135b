"""The catalogue's entries explained in words (GP168, :mod:`gradprobe.checks.unexplained`):
what torch's message means and what to change; the cause comes from the traceback's shape
("raised"), from where the tensor the raising line names was made ("made"), or from the node
an op quoted in the message made ("node")."""

from __future__ import annotations

from gradprobe import _compat as t
from gradprobe.checks._catalogue.entry import Entry

__all__ = ["WORDED"]


def _W(
    key: str,
    family: str,
    message: str,
    names: str,
    meaning: str,
    fix: str,
    *,
    blame: str = "raised",
    roles: tuple[str, ...] = ("cause", "error"),
) -> Entry:
    """An entry explained in words (GP168): torch's text from ``_compat.WORDED_TEXTS``."""
    return Entry(
        key, family, t.WORDED_TEXTS[key], "GP168", message, names, roles, meaning, fix, blame
    )


WORDED: tuple[Entry, ...] = (
    # engine
    _W(
        "derivative_not_implemented",
        "engine",
        "the derivative for '...' is not implemented.",
        "the line that called the op (in the forward)",
        "backward() reached an op that has no derivative formula for one of its inputs. The "
        "forward ran, and the error surfaces only when backward arrives at it.",
        "Use an op with a derivative for that input, detach the input when it needs no "
        "gradient, or write a custom autograd.Function with its backward.",
        blame="node",
    ),
    _W(
        "anomaly_nan_in_backward",
        "engine",
        "Function 'SqrtBackward0' returned nan values in its 0th output.",
        "the line that made the node named in the message (its backward produced the NaN)",
        "With anomaly detection on, torch checks every gradient a backward node produces and "
        "stops at the first NaN. The named op's derivative is undefined at the values it saw "
        "(sqrt or log at 0, division by 0, pow with a negative base), so the NaN starts there.",
        "Keep the op's input away from the bad point: add an epsilon (torch.sqrt(x + 1e-8)), "
        "clamp it, or use a stable form (torch.logsumexp, F.log_softmax, torch.where with a "
        "safe value on both branches).",
    ),
    _W(
        "out_arg_requires_grad",
        "engine",
        "add(): functions with out=... arguments don't support automatic differentiation, but "
        "one of the arguments requires grad.",
        "the call with out=",
        "An op was asked to write into an existing tensor (out=) while one of its inputs "
        "requires grad. Writing into a caller's buffer cannot be recorded in the graph, so "
        "torch refuses instead of silently losing the gradient.",
        "Drop out= and use the returned tensor (buffer = torch.add(w, 1.0)); keep out= only "
        "under torch.no_grad() or on detached inputs.",
    ),
    _W(
        "nondifferentiable_argument",
        "engine",
        "The function 'binary_cross_entropy' is not differentiable with respect to argument "
        "'weight'.",
        "the call that passes a tensor requiring grad in that argument",
        "The op has no derivative for the named argument, yet the tensor given there "
        "requires grad. Weights, targets and indices are usually such arguments: torch "
        "refuses rather than return no gradient for them.",
        "Pass that argument detached (weight=class_weight.detach()); if it must be learned, "
        "write the loss from differentiable ops (e.g. multiply an unweighted, reduction='none' "
        "loss by the weight yourself).",
    ),
    _W(
        "complex_autograd_unsupported",
        "engine",
        "nan_to_num does not support automatic differentiation for outputs with complex dtype.",
        "the call to the op on a complex tensor that requires grad",
        "The op runs on complex numbers but autograd has no complex derivative for it. Torch "
        "refuses in the forward, since a backward through it could not be computed.",
        "Apply the op to real tensors (split with .real/.imag or torch.view_as_real, then "
        "recombine with torch.complex), or to a detached tensor if no gradient is needed.",
    ),
    _W(
        "qr_mode_r_backward",
        "engine",
        "The derivative of linalg.qr depends on Q, which is not computed when mode='r'.",
        "no line from the traceback: the finding points at the backward() call (`error`); "
        "the linalg.qr(..., mode='r') call is the line to change",
        "The gradient of a QR decomposition needs Q, but mode='r' computes only R. The forward "
        "succeeds; backward has nothing to build the derivative from.",
        "Call torch.linalg.qr(A) (mode='reduced') and ignore Q when only R is needed.",
        roles=("error",),
    ),
    _W(
        "retain_grad_without_grad",
        "engine",
        "can't retain_grad on Tensor that has requires_grad=False",
        "the retain_grad() call",
        "retain_grad() asks autograd to keep a non-leaf's gradient, but this tensor is not part "
        "of any graph: nothing it came from requires grad, or it was made under no_grad.",
        "Make an input of it require grad (a parameter, or x.requires_grad_()), or drop the "
        "retain_grad() call when no gradient is wanted.",
    ),
    _W(
        "backward_grad_tensors_count",
        "engine",
        "got 2 tensors and 1 gradients",
        "the backward() call (`error`): it pairs outputs with gradients",
        "torch.autograd.backward was given a list of outputs and a list of gradients of "
        "another length. Each output needs its own gradient (or None for a scalar), in the "
        "same order.",
        "Give one gradient per output (torch.autograd.backward([a, b], [ga, gb])), or sum the "
        "scalar losses and call backward() once: (a + b).backward().",
        roles=("error",),
    ),
    _W(
        "grad_tensors_type",
        "engine",
        "gradients can be either Tensors or None, but got float",
        "the backward() call: its gradient argument",
        "A gradient handed to backward() is a Python number or another non-tensor. Autograd "
        "needs a tensor shaped like its output (or None for a scalar output).",
        "Pass tensors: torch.autograd.backward([a, b], [torch.tensor(1.0), torch.tensor(0.5)]), "
        "or weight the losses and call backward() once: (a + 0.5 * b).backward().",
    ),
    _W(
        "grad_output_dtype_mismatch",
        "engine",
        "For complex Tensors, both grad_output and output are required to have the same dtype.",
        "the backward(gradient) call",
        "The gradient given to backward() is real while the output is complex (or the other "
        "way round). For complex outputs autograd needs a gradient of the same complex dtype.",
        "Make the gradient the output's dtype: out.backward(torch.ones_like(out)), or reduce "
        "the output to a real scalar (out.abs().sum()) and call backward() without one.",
    ),
    _W(
        "saved_tensor_detached_inplace",
        "engine",
        "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().",
        "no line from the traceback: the finding points at the backward() call (`error`); "
        "the detach_() on a tensor the graph saved is the line to change",
        "A tensor the graph saved for backward was detached in place afterwards, which cuts "
        "it out of the graph that still needs it. Backward finds the saved value no longer "
        "belongs to it.",
        "Use the out-of-place h = h.detach() (a new tensor; the graph keeps the old one), or "
        "detach only after backward().",
        roles=("error",),
    ),
    _W(
        "resize_requires_grad",
        "engine",
        "cannot resize variables that require grad",
        "the resize_() call",
        "resize_() changes a tensor's size in place, which autograd cannot record for a tensor "
        "that requires grad.",
        "Use an out-of-place reshape (w.reshape(2, 3), w.view(2, 3)), or resize a detached "
        "copy under torch.no_grad().",
    ),
    _W(
        "set_data_integer",
        "engine",
        "data set to a tensor that requires gradients must be floating point or complex dtype",
        "the `.data =` assignment",
        "An integer tensor was put into .data of a tensor that requires grad. Only floating "
        "point and complex tensors can carry gradients, so the swap would leave an integer "
        "tensor that requires grad.",
        "Assign a float tensor (w.data = torch.arange(4.0)), or better copy under no_grad: "
        "with torch.no_grad(): w.copy_(values).",
    ),
    _W(
        "set_data_incompatible",
        "engine",
        "Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
        "incompatible tensor type.",
        "the `.data =` assignment",
        "`.data =` may swap a tensor's values only for a tensor of the same kind; this one has "
        "another layout (sparse, strided) or device type.",
        "Build a new parameter of the kind you want (nn.Parameter(w.detach().to_sparse())) and "
        "assign that, or convert at the point of use instead.",
    ),
    # setting .grad
    _W(
        "grad_assign_type",
        "setting .grad",
        "assigned grad expected to be a Tensor or None but got grad of type float",
        "the `.grad =` assignment",
        ".grad was set to a number or another non-tensor. A gradient must be a tensor shaped "
        "like its tensor, or None to clear it.",
        "Assign a tensor (w.grad = torch.zeros_like(w)) or None; to scale it, write "
        "w.grad.mul_(0.5).",
    ),
    _W(
        "grad_assign_self",
        "setting .grad",
        "can't assign Variable as its own grad",
        "the `.grad =` assignment",
        "A tensor was set as its own gradient. The gradient must be separate storage, or "
        "every update would also change the values.",
        "Assign a copy (w.grad = w.detach().clone()) or a new tensor.",
    ),
    _W(
        "grad_assign_shape",
        "setting .grad",
        "attempting to assign a gradient of size '[1, 3]' to a tensor of size '[3]'.",
        "the `.grad =` assignment",
        "A gradient of another shape than its tensor was assigned to .grad. Optimizers update "
        "each element from the matching element of .grad, so the shapes must match exactly.",
        "Reshape the gradient first (w.grad = g.reshape(w.shape)), or fix the computation "
        "that gave it the extra or missing dimension.",
    ),
    _W(
        "grad_assign_dtype",
        "setting .grad",
        "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'.",
        "the `.grad =` assignment",
        "The gradient assigned to .grad has another dtype than the tensor's gradients must "
        "have (its dtype, unless grad_dtype says otherwise).",
        "Convert it: w.grad = g.to(w.dtype); or set w.grad_dtype first when a different "
        "gradient dtype is intended.",
    ),
    _W(
        "grad_assign_device",
        "setting .grad",
        "attempting to assign a gradient with device type 'meta' to a tensor with device type "
        "'cpu'.",
        "the `.grad =` assignment",
        "The gradient assigned to .grad lives on another device type than its tensor. A "
        "gradient must sit beside its tensor so that optimizers can combine them.",
        "Move it first: w.grad = g.to(w.device).",
    ),
    _W(
        "grad_dtype_non_leaf",
        "setting .grad",
        "grad_dtype can only be set on leaf tensors.",
        "the line that sets or reads grad_dtype",
        "grad_dtype decides the dtype of the gradient accumulated into .grad, and only leaves "
        "accumulate one. This tensor was computed by an op, so it has no .grad to shape.",
        "Set grad_dtype on the leaf the tensor came from (a parameter, or the tensor created "
        "with requires_grad=True).",
    ),
    # autograd.grad
    _W(
        "empty_inputs",
        "autograd.grad",
        "`inputs` argument to `backward()` cannot be empty.",
        "the line that built the empty list of inputs (the call is the error)",
        "backward(inputs=...) or autograd.grad was given an empty list of tensors to "
        "differentiate. Often the list was built by a filter that matched nothing, or from a "
        "generator already used up.",
        "Check how the list is built (a filter on requires_grad, model.parameters() consumed "
        "earlier: use list(model.parameters())), or leave inputs= out to reach every leaf.",
        blame="empty",
    ),
    _W(
        "grad_input_not_tensor",
        "autograd.grad",
        "all inputs have to be Tensors or GradientEdges, but got Linear",
        "the autograd.grad call (`error`): its inputs",
        "The tensors to differentiate with respect to include something else, often a module "
        "or a generator of parameters. autograd.grad needs the tensors themselves.",
        "Pass the parameters as a list: torch.autograd.grad(loss, list(model.parameters())).",
        roles=("error",),
    ),
    _W(
        "gradient_edge_without_grad",
        "autograd.grad",
        "It is not possible to get the gradient edge for a Tensor that does not require gradients",
        "the get_gradient_edge() call",
        "get_gradient_edge() was asked for a tensor outside any graph: it does not require "
        "grad, so no autograd node leads to it.",
        "Make something it comes from require grad before computing it, or ask for the edge of "
        "a tensor that is part of the graph.",
    ),
    _W(
        "gradcheck_no_grad_inputs",
        "autograd.grad",
        "gradcheck expects at least one input tensor to require gradient, but none of them have "
        "requires_grad=True.",
        "the line that made the input without requires_grad=True",
        "gradcheck compares analytical and numerical gradients with respect to the inputs "
        "that require grad; none of these inputs does, so there is nothing to check.",
        "Create the inputs with requires_grad=True and dtype=torch.float64: "
        "x = torch.randn(4, dtype=torch.float64, requires_grad=True).",
        blame="plain",
    ),
    # hooks
    _W(
        "full_hook_no_input_grad_return",
        "hooks",
        "Backward hook for Modules where no input requires gradient should always return None "
        "or None for all gradients.",
        "the return statement of the hook",
        "A full backward hook returned new gradients for a module none of whose inputs "
        "requires grad (typically the first layer, fed the data batch). There is no input "
        "gradient to replace there: grad_input is all None, and torch refuses a hook that "
        "returns anything else.",
        "Return None (or a tuple of None) when grad_input holds only None: "
        "`if all(g is None for g in grad_input): return None`; or register the hook only on "
        "layers after the first.",
        blame="hook",
    ),
    _W(
        "hook_returned_non_tensor",
        "hooks",
        "expected Variable, but hook returned 'float'",
        "the return of the tensor hook, when one tensor hook was registered while recording "
        "(torch runs tensor hooks from C++: no traceback shows which one); else only the "
        "backward() call (`error`)",
        "A tensor hook returned something other than a tensor or None, often a number from "
        ".item() or .norm() taken for logging. Whatever a hook returns replaces the gradient.",
        "Return None from hooks that only observe (log the value, then fall off the end), or "
        "return a tensor shaped like the gradient.",
        blame="hook",
    ),
    _W(
        "post_accumulate_hook_non_leaf",
        "hooks",
        "post accumulate grad hooks cannot be registered on non-leaf tensors",
        "the line that made the tensor a non-leaf (the registration is the error)",
        "A post-accumulate-grad hook runs after a gradient lands in .grad, which happens only "
        "for leaves. The tensor was computed by an op, so nothing is ever accumulated into it.",
        "Register the hook on the leaf (the parameter itself); if the tensor was meant to be "
        "one, apply the op first and set requires_grad last, "
        "w = (torch.randn(3) * 0.1).requires_grad_().",
        blame="made",
    ),
    _W(
        "post_accumulate_hook_return",
        "hooks",
        "Tensor post accumulate grad hooks should return None.",
        "no line from the traceback: the finding points at the backward() call (`error`); "
        "the hook's return is the line to change",
        "A post-accumulate-grad hook returned a value. Such a hook receives the tensor after "
        "its .grad is final; it may change .grad in place but cannot hand back a replacement.",
        "Modify the gradient in place and return nothing: def hook(p): p.grad.mul_(0.5).",
        roles=("error",),
    ),
    _W(
        "unpack_hook_non_tensor",
        "hooks",
        "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
        "NoneType",
        "no line from the traceback: the finding points at the backward() call (`error`); "
        "the unpack hook's return is the line to change",
        "A saved_tensors_hooks unpack hook returned something other than a tensor, often None "
        "from a missing return. Backward needs the saved tensor back to compute gradients.",
        "Return the tensor from the unpack hook (the one pack stored, moved back where needed).",
        roles=("error",),
    ),
    # custom Function
    _W(
        "custom_backward_non_tensor",
        "custom Function",
        "expected Variable or None (got float)",
        "no line from the traceback: the finding points at the backward() call (`error`); "
        "the Function's backward return is the line to change",
        "A custom Function's backward returned a number or another non-tensor as a gradient. "
        "Each returned gradient must be a tensor shaped like its input, or None.",
        "Return a tensor: return grad * 2.0 (a number times the incoming gradient), or "
        "torch.full_like(x, 2.0) * grad.",
        roles=("error",),
    ),
    _W(
        "custom_backward_missing",
        "custom Function",
        "You must implement either the backward or vjp method for your custom "
        "autograd.Function to use it with backward mode AD.",
        "the Function's class (the class line), or a method whose name is a near miss of "
        "backward (`def backwards`) when it has one",
        "Backward reached a custom Function that defines a forward but no backward. Torch "
        "cannot derive a backward from arbitrary Python code.",
        "Add a @staticmethod backward(ctx, *grads) returning one gradient per forward input; "
        "if the op is plain torch code, drop the Function and call the ops directly.",
        blame="method",
    ),
    _W(
        "legacy_function",
        "custom Function",
        "Legacy autograd function with non-static forward method is deprecated.",
        "the call of a Function instance (MyFn()(x))",
        "A custom Function written in the old style (forward as an instance method, called "
        "through an instance) was used. Torch supports only Functions with static methods, "
        "called through apply.",
        "Make forward and backward @staticmethods taking ctx first, save tensors with "
        "ctx.save_for_backward, and call Square.apply(x).",
    ),
    _W(
        "inplace_view_function_multiple_outputs",
        "custom Function",
        "If your Function modifies inplace an input that is a view of another Tensor, your "
        "Function cannot return more than one Tensor.",
        "where the view given to the Function was made (a slice, narrow, transpose)",
        "A custom Function marks an input dirty (it writes it in place) and returns several "
        "tensors, and that input is a view of another tensor. Autograd must rewrite the view's "
        "history after an in-place write, which it can do only for a Function with a single "
        "output.",
        "Pass a tensor that is not a view (x.narrow(...).clone(), or .contiguous() where it "
        "copies), or split the Function in two: one that writes in place and returns that "
        "tensor alone, one that computes the other outputs.",
        blame="view",
    ),
    _W(
        "mark_dirty_not_returned",
        "custom Function",
        "Some elements marked as dirty during the forward method were not returned as output.",
        "the .apply call of the Function whose forward marks the tensor dirty",
        "forward passed a tensor to ctx.mark_dirty (it changed it in place) but did not return "
        "that same tensor. Autograd must hand the modified tensor back as an output to keep "
        "its history right.",
        "Return the tensor that was modified in place (return x after x.mul_(2)), or do not "
        "mark it dirty and compute out of place.",
    ),
    _W(
        "saved_input_returned_as_is",
        "custom Function",
        "An input that has been returned as-is as output is being saved for backward.",
        "the .apply call of the Function",
        "A Function with a separate setup_context returned one of its inputs unchanged and "
        "then saved it. In that form torch cannot tell the saved input from the output, so it "
        "refuses.",
        "Return a view of the input instead (return x.view_as(x)), or take ctx in forward and "
        "save there.",
    ),
    _W(
        "saved_tensors_accessed_twice",
        "custom Function",
        "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True",
        "the second read of ctx.saved_tensors in the backward",
        "The Function frees its saved tensors on the first read of ctx.saved_tensors "
        "(clear_saved_tensors_on_access=True), and backward read them again.",
        "Unpack once into local names at the top of backward ((x,) = ctx.saved_tensors) and "
        "use those.",
    ),
    _W(
        "custom_jvp_missing",
        "custom Function",
        "You must implement the jvp function for custom autograd.Function to use it with "
        "forward mode AD.",
        "the .apply call on dual tensors (the Function needs a jvp)",
        "A custom Function was applied to dual tensors (forward-mode AD) but defines no jvp. "
        "Torch cannot derive the forward derivative of arbitrary Python code.",
        "Add a @staticmethod jvp(ctx, *tangents) returning the output tangents (save what it "
        "needs with ctx.save_for_forward), or use reverse mode instead.",
    ),
    _W(
        "custom_jvp_wrong_count",
        "custom Function",
        "Function's jvp returned an invalid number of forward gradients (expected 1 but got 2)",
        "the .apply call on dual tensors (the Function's jvp return is wrong)",
        "A custom Function's jvp returned a different number of tangents than forward returns "
        "outputs. Each output needs exactly one tangent, in order.",
        "Return one tangent per forward output (a single tensor when forward returns one).",
    ),
    # checkpoint
    _W(
        "checkpoint_outputs_no_grad",
        "checkpoint",
        "none of output has requires_grad=True, this checkpoint() is not necessary",
        "the checkpoint(...) call (backward was re-running it)",
        "During backward a reentrant checkpoint re-ran its function, and none of what it "
        "returned requires grad: the function computes its result under no_grad or detaches "
        "it, so no gradient can flow back through the checkpoint.",
        "Remove the no_grad / detach from the checkpointed function, or do not checkpoint a "
        "block that takes no part in the gradient; prefer use_reentrant=False.",
    ),
    # inference mode
    _W(
        "inference_view_inplace",
        "inference mode",
        "A view was created in inference mode and is being modified inplace in normal mode.",
        "the in-place write on the view",
        "A view of a normal tensor was taken inside torch.inference_mode() and written in "
        "place after the block (or its base was). Autograd has no record of the view, so it "
        "cannot tell how the write affects the base's gradient.",
        "Take the view and write it on the same side of the block, or write a copy "
        "(first = hidden[:2].clone() inside the block).",
    ),
    # torch.func
    _W(
        "backward_inside_func_transform",
        "torch.func",
        "backward() called inside a functorch transform. This is not supported",
        "the backward() call inside the transformed function",
        ".backward() was called in a function that torch.func.grad, vjp or vmap is "
        "transforming. The transform computes gradients itself; it cannot follow a backward "
        "that writes into .grad.",
        "Return the loss from the function and let the transform differentiate it "
        "(grads = torch.func.grad(loss_fn)(w)), or call backward() outside the transform.",
    ),
    _W(
        "func_grad_output_type",
        "torch.func",
        "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>",
        "the return line of the function given to torch.func.grad",
        "The function given to torch.func.grad returned a Python number or another "
        "non-tensor, often after .item(). grad needs the loss as a tensor to differentiate.",
        "Return the tensor itself (drop .item()); return extra values through has_aux=True.",
        blame="function",
    ),
    _W(
        "func_has_aux_format",
        "torch.func",
        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if "
        "has_aux is True",
        "the return line of the function (return (loss, aux)), or has_aux=True",
        "has_aux=True was given but the function does not return a pair (output, aux). The "
        "transform needs the second element to pass through untouched.",
        "Return (loss, aux) from the function, or drop has_aux=True.",
        blame="function",
    ),
    _W(
        "func_output_type",
        "torch.func",
        "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
        "<class 'float'>",
        "the return line of the function given to the transform",
        "The function given to a torch.func transform (vjp, jvp, jacrev, jacfwd) returned "
        "something other than tensors, or nothing. The transform can only differentiate "
        "tensor outputs.",
        "Return tensors (drop .item(), return torch.stack(values) instead of a list); pass "
        "other values through has_aux=True.",
        blame="function",
    ),
    _W(
        "func_jvp_arguments",
        "torch.func",
        "jvp(f, primals, tangents): Expected primals to be a tuple.",
        "the torch.func call",
        "The primals or tangents given to a torch.func transform are not a tuple of tensors "
        "(a bare tensor, a list, an empty tuple), or the two are not built alike.",
        "Wrap them in tuples, one tangent per primal: torch.func.jvp(f, (x,), (torch.ones_like(x),)).",
    ),
    _W(
        "func_vjp_integer_output",
        "torch.func",
        "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
        "with dtype torch.int64",
        "the torch.func.vjp call",
        "The function given to vjp returns an integer tensor (argmax, a count, indices). "
        "Integer values have no gradient, so there is nothing to pull back.",
        "Differentiate a floating-point output (the scores before argmax); return the "
        "integer result through has_aux=True.",
    ),
    _W(
        "func_retain_grad",
        "torch.func",
        "You are attempting to call Tensor.retain_grad() inside of a function being transformed "
        "by a functorch transform.",
        "the retain_grad() call",
        "retain_grad() keeps a gradient in .grad, which torch.func transforms never fill: "
        "they return gradients as values instead.",
        "Drop retain_grad(); to get the gradient of an intermediate, make it an input of the "
        "function you transform, or return it through has_aux=True and differentiate separately.",
    ),
    _W(
        "func_data_mutation",
        "torch.func",
        "mutating directly with `.data` inside functorch transform is not allowed.",
        "the `.data` write",
        "The transformed function writes a tensor through .data, which bypasses the transform "
        "and autograd alike; torch.func cannot follow such a write.",
        "Compute a new tensor (w = w.clamp(-1, 1)) and use it; clamp parameters outside the "
        "transform, under torch.no_grad(), if that is the intent.",
    ),
    _W(
        "func_saved_tensor_hooks",
        "torch.func",
        "torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks.",
        "the torch.func call made while saved-tensor hooks are active",
        "A torch.func transform ran while saved_tensors_hooks were active (save_on_cpu, a "
        "non-reentrant checkpoint, your own hooks). The transforms cannot yet combine with "
        "them.",
        "Call the transform outside the hooks' with block, or drop the hooks (or the "
        "checkpoint) around it.",
    ),
    _W(
        "func_custom_function_setup_context",
        "torch.func",
        "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
        "jacrev, ...), it must override the setup_context staticmethod.",
        "the .apply call inside the transformed function (the Function needs setup_context)",
        "A custom Function whose forward takes ctx ran under a torch.func transform. The "
        "transforms need the newer style, where forward takes no ctx and setup_context saves "
        "what backward needs.",
        "Write forward(x) without ctx and add @staticmethod setup_context(ctx, inputs, output) "
        "that calls ctx.save_for_backward(...).",
    ),
    _W(
        "custom_function_vmap",
        "torch.func",
        "You tried to vmap over Cube, but it does not have vmap support.",
        "the vmap call over the Function",
        "A custom Function ran under torch.vmap, but it has no vmap rule. Vmap cannot see "
        "inside it to know how its batch dimension moves.",
        "Set generate_vmap_rule = True on the Function class (works when forward and "
        "backward are plain torch ops), or write a vmap staticmethod.",
    ),
    # forward-mode AD
    _W(
        "forward_ad_not_implemented",
        "forward-mode AD",
        "Trying to use forward AD with special_zeta that does not support it because it has "
        "not been implemented yet.",
        "the call of the op on a dual tensor",
        "Forward-mode AD (make_dual, torch.func.jvp, jacfwd) reached an op that has no forward "
        "derivative in torch.",
        "Use reverse mode for this part (torch.func.jacrev, vjp), an equivalent op with a "
        "forward derivative, or a custom Function with a jvp.",
    ),
    _W(
        "make_dual_without_level",
        "forward-mode AD",
        "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
        "enter_dual_level() first.",
        "the make_dual call",
        "make_dual was called outside a forward-AD level. Dual tensors belong to a level, "
        "opened by the dual_level context manager.",
        "Wrap the computation in with torch.autograd.forward_ad.dual_level(): and make the "
        "dual tensors inside it.",
    ),
    _W(
        "nested_dual_level",
        "forward-mode AD",
        "Nested forward mode AD is not supported at the moment",
        "the inner dual_level() entry",
        "A forward-AD level was entered inside another. Torch supports one level at a time.",
        "Use a single dual_level block; for higher derivatives use torch.func (jacfwd(jacfwd(f))).",
    ),
    _W(
        "dual_tangent_shape",
        "forward-mode AD",
        "Trying to set a forward gradient that has a different size than that of the original "
        "Tensor",
        "the make_dual call",
        "The tangent given to make_dual has another shape than its primal. A tangent is a "
        "direction in the primal's space, one value per element.",
        "Give a tangent shaped like the primal (torch.ones_like(x), or v.reshape(x.shape)).",
    ),
    _W(
        "dual_tangent_is_dual",
        "forward-mode AD",
        "Setting a forward grad that itself has a forward gradient at the same level",
        "the make_dual call",
        "The tangent given to make_dual is itself a dual tensor of the same level. A tangent "
        "must be a plain value.",
        "Pass a plain tensor as the tangent (fwAD.unpack_dual(t).primal, or one made outside "
        "the level).",
    ),
    _W(
        "dual_integer",
        "forward-mode AD",
        "Expected primal to be floating point or complex, but got: torch.int64",
        "the make_dual call",
        "make_dual was given an integer primal or tangent. Derivatives exist only for "
        "floating point and complex values.",
        "Convert first: fwAD.make_dual(steps.float(), torch.ones(5)).",
    ),
    _W(
        "resize_dual",
        "forward-mode AD",
        "cannot resize variables that has a forward grad",
        "the resize_() call",
        "resize_() was called on a dual tensor. Its tangent would no longer match its shape.",
        "Reshape out of place (x.reshape(2, 3)) so the tangent follows.",
    ),
    # autograd.functional
    _W(
        "functional_inputs_type",
        "autograd.functional",
        "The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the "
        "given inputs has type <class 'list'>.",
        "the torch.autograd.functional call",
        "torch.autograd.functional was given inputs (or v) that are neither a tensor nor a "
        "tuple of tensors, often a list.",
        "Pass a tuple: jacobian(torch.mul, (a, b)).",
    ),
    _W(
        "functional_v_missing",
        "autograd.functional",
        "The vector v can only be None if the user-provided function returns a single Tensor "
        "with a single element.",
        "the torch.autograd.functional call",
        "vjp/jvp/vhp/hvp were called without v, which only works when the function's output "
        "(or input) has one element. Here it has several, so the direction is ambiguous.",
        "Pass v shaped like the output for vjp (or like the input for jvp, vhp, hvp): "
        "vjp(f, x, torch.ones_like(f(x))).",
    ),
    _W(
        "functional_v_shape",
        "autograd.functional",
        "v has invalid size: should be torch.Size([3]) but got torch.Size([1, 3]).",
        "the torch.autograd.functional call",
        "The v given to vjp/jvp/vhp/hvp does not match what it multiplies: its size, or the "
        "number of tensors in the tuple.",
        "Give v the output's shape for vjp and the input's shape for jvp, vhp and hvp, one "
        "tensor per output or input.",
    ),
    _W(
        "functional_hessian_output",
        "autograd.functional",
        "The Tensor returned by the function given to hessian should contain a single element",
        "the torch.autograd.functional call",
        "hessian, vhp and hvp need a function that returns one scalar tensor, and this one "
        "returns several values or tensors.",
        "Reduce the output to a scalar inside the function (return (x**2).sum()), or use "
        "jacobian for a vector-valued function.",
    ),
    # optimizer
    _W(
        "optimizer_non_leaf",
        "optimizer",
        "can't optimize a non-leaf Tensor",
        "the line that made the tensor a non-leaf (an op applied after requires_grad=True)",
        "An optimizer was given a tensor computed by an operation (a non-leaf). Optimizers "
        "update leaves: the tensor was probably made with requires_grad=True and then scaled, "
        "moved or cast, which returns a new tensor whose .grad stays None.",
        "Apply the op first and set requires_grad last: "
        "w = (torch.randn(3) * 0.01).requires_grad_(), or wrap it in nn.Parameter.",
        blame="made",
    ),
    _W(
        "optimizer_empty_params",
        "optimizer",
        "optimizer got an empty parameter list",
        "the optimizer's construction",
        "The optimizer was built from no parameters: the model has none (only activations and "
        "reshapes), or the generator from model.parameters() was already used up.",
        "Pass the parameters of the module that has them, and materialise a generator used "
        "twice with list(model.parameters()).",
    ),
    _W(
        "optimizer_params_type",
        "optimizer",
        "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
        "got torch.FloatTensor",
        "the optimizer's construction (or add_param_group)",
        "The optimizer was given a single tensor, a module or another object where it expects "
        "an iterable of tensors or of param-group dicts.",
        "Pass model.parameters(), a list of tensors ([w]), or a list of dicts "
        "([{'params': ..., 'lr': ...}]).",
    ),
    _W(
        "optimizer_param_in_two_groups",
        "optimizer",
        "some parameters appear in more than one parameter group",
        "the line that built the parameter groups (the call if inline)",
        "One parameter was listed in two param groups, so the optimizer would apply two "
        "updates with two settings to it.",
        "List each parameter once: build the groups from disjoint lists (e.g. split "
        "named_parameters() on the name, weights in one group and biases in another).",
        blame="argument",
    ),
    _W(
        "optimizer_state_dict_mismatch",
        "optimizer",
        "loaded state dict contains a parameter group that doesn't match the size of "
        "optimizer's group",
        "the load_state_dict call",
        "The optimizer state being loaded was saved from an optimizer with other param groups "
        "(another number of groups, or of parameters in a group). Loading pairs states to "
        "parameters by position, so they must line up.",
        "Build the model and the optimizer exactly as in the run that saved the state (same "
        "layers, bias settings, frozen parameters, group order) before loading it.",
    ),
    _W(
        "clip_grad_nonfinite",
        "optimizer",
        "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it "
        "cannot be clipped.",
        "the clip_grad_norm_ call with error_if_nonfinite=True",
        "A gradient contains NaN or inf, so the total norm is not finite and clipping cannot "
        "rescale it; error_if_nonfinite=True turns this into an error.",
        "Find where the NaN or inf enters (inputs, log/sqrt/division at 0, a too-high learning "
        "rate); to skip such steps, check the returned norm with torch.isfinite and "
        "zero_grad instead of stepping.",
    ),
    # AMP
    _W(
        "ddp_lazy_params",
        "DDP",
        "Modules with uninitialized parameters can't be used with `DistributedDataParallel`. "
        "Run a dummy forward pass to correctly initialize the modules",
        "where the lazy layer (nn.LazyLinear, nn.LazyConv2d) inside the wrapped model was made",
        "A lazy layer creates its parameters at its first forward call, from the shape of "
        "what it is given. DistributedDataParallel must know every parameter when it is "
        "built, to broadcast and bucket them, so a model whose lazy layers never ran cannot "
        "be wrapped.",
        "Run one forward pass on a batch of the right shape before wrapping "
        "(model(sample); model = DDP(model)), or give the layer its input size "
        "(nn.Linear(in_features, 3)).",
        blame="lazy",
    ),
    _W(
        "scaler_without_scale",
        "AMP",
        "Attempted step but _scale is None.  This may indicate your script did not use "
        "scaler.scale(loss or outputs) earlier in the iteration.",
        "the backward() that ran before it, on a loss the scaler never scaled (else the "
        "scaler.step / unscale_ / update call)",
        "GradScaler was asked to step, unscale or update without having scaled a loss in "
        "this iteration, so it has no scale to undo.",
        "Backpropagate through the scaler: scaler.scale(loss).backward(), then "
        "scaler.step(opt) and scaler.update().",
        blame="backward",
    ),
    _W(
        "scaler_no_inf_checks",
        "AMP",
        "No inf checks were recorded for this optimizer.",
        "the scaler.step call",
        "scaler.step found no gradient on any of the optimizer's parameters, so it had nothing "
        "to check for inf/NaN. The scaled loss did not depend on those parameters.",
        "Give the optimizer the parameters the loss uses (model.parameters() of the model "
        "that made the loss), or make sure backward() reaches them.",
    ),
    _W(
        "scaler_update_without_step",
        "AMP",
        "No inf checks were recorded prior to update.",
        "the scaler.update call",
        "scaler.update() ran without any scaler.step(optimizer) before it in this iteration, "
        "so the scaler has no record to update its scale from.",
        "Step through the scaler (scaler.step(opt), not opt.step()) before scaler.update().",
    ),
    _W(
        "scaler_step_twice",
        "AMP",
        "step() has already been called since the last update().",
        "the second scaler.step call",
        "scaler.step(opt) ran twice for one optimizer before scaler.update(). Each optimizer "
        "may step once per scaled backward.",
        "Call scaler.step(opt) once per iteration, then scaler.update() (once per iteration, "
        "after all optimizers stepped).",
    ),
    _W(
        "unscale_after_step",
        "AMP",
        "unscale_() is being called after step().",
        "the scaler.unscale_ call",
        "scaler.unscale_(opt) was called after scaler.step(opt) in the same iteration. Step "
        "already unscaled the gradients and applied them.",
        "Unscale before stepping (scaler.unscale_(opt), clip, then scaler.step(opt)), or "
        "drop the call.",
    ),
    # leaving autograd
    _W(
        "numpy_requires_grad",
        "leaving autograd",
        "Can't call numpy() on Tensor that requires grad.",
        "the .numpy() call",
        "A tensor that requires grad was handed to NumPy. NumPy arrays carry no graph, so "
        "torch refuses rather than let the values leave autograd unnoticed.",
        "Call .detach() first (t.detach().cpu().numpy()) when the values are only read; "
        "keep the computation in torch if a loss is built from them.",
    ),
    _W(
        "dlpack_requires_grad",
        "leaving autograd",
        "Can't export tensors that require gradient, use tensor.detach()",
        "the DLPack export (np.from_dlpack, to_dlpack, __dlpack__)",
        "A tensor that requires grad was shared through DLPack. The receiving library would "
        "see the values but none of the graph.",
        "Export the detached tensor (np.from_dlpack(scores.detach())); keep the computation "
        "in torch if gradients must flow through it.",
    ),
    _W(
        "python_map_requires_grad",
        "leaving autograd",
        "Can't call apply_() on Variable that requires grad.",
        "the apply_() / map_() call",
        "apply_() and map_() run a Python function on each element in place, which autograd "
        "cannot differentiate; on a tensor that requires grad torch refuses.",
        "Write the function with torch ops (w.clamp(max=1.0)); to change a parameter's values, "
        "do it under torch.no_grad() or on w.detach().",
    ),
    # gradcheck
    _W(
        "gradcheck_jacobian_mismatch",
        "gradcheck",
        "Jacobian mismatch for output 0 with respect to input 0,",
        "an input that is not float64 (where it was made), else the backward's return line",
        "gradcheck compared the gradients backward computes with finite differences and they "
        "differ. Either the backward formula is wrong, or the inputs are float32, whose "
        "finite differences are too coarse to agree with any formula.",
        "Make the inputs float64 (torch.randn(..., dtype=torch.float64, requires_grad=True)); "
        "if they already are, fix the formula in backward (the chain rule: multiply by "
        "grad_output).",
        blame="gradcheck",
    ),
    _W(
        "gradcheck_not_reentrant",
        "gradcheck",
        "Backward is not reentrant, i.e., running backward with same input and grad_output "
        "multiple times gives different values",
        "the return line of the backward gradcheck ran",
        "gradcheck ran backward twice on the same input and grad_output and got different "
        "values: the backward draws random numbers or keeps state between calls.",
        "Compute backward from ctx and grad_output alone; draw any randomness in forward and "
        "save it for backward.",
        blame="function",
    ),
    _W(
        "gradcheck_grad_output_ignored",
        "gradcheck",
        "backward not multiplied by grad_output",
        "the return line of the backward gradcheck ran",
        "The backward returned the same gradients whatever grad_output it was given: it "
        "computes the derivative of the function but forgets the chain rule.",
        "Multiply the local derivative by grad_output in backward (return grad_output * d).",
        blame="function",
    ),
    _W(
        "gradcheck_overlapping_input",
        "gradcheck",
        "The 0th input has a dimension with stride 0. gradcheck only supports inputs that are "
        "non-overlapping",
        "the line that made the input (an expand() or a broadcast view)",
        "gradcheck perturbs one element at a time; in a tensor with a stride-0 dimension "
        "(expand) many positions share one element, so the numerical gradient cannot be "
        "computed.",
        "Pass a contiguous input: x = base.expand(4, 5).contiguous().requires_grad_().",
        blame="argument",
    ),
    # custom Function: what forward declared on ctx, and the class itself
    _W(
        "ctx_mark_non_differentiable_non_tensor",
        "custom Function",
        "mark_non_differentiable only accepts variable arguments, but got int",
        "the ctx.mark_non_differentiable(...) call in the Function's forward",
        "ctx.mark_non_differentiable() marks output tensors whose gradient is always zero "
        "(indices, masks); it was given something that is not a tensor. torch checks it when "
        "forward returns, so the traceback shows the apply() line, not the call.",
        "Pass only output tensors to ctx.mark_non_differentiable(); a Python number returned "
        "by forward needs no marking (it has no gradient).",
        blame="ctx:mark_non_differentiable",
    ),
    _W(
        "ctx_mark_dirty_non_tensor",
        "custom Function",
        "mark_dirty can only accept variables, but argument 0 is of type int",
        "the ctx.mark_dirty(...) call in the Function's forward",
        "ctx.mark_dirty() declares which input tensors forward modified in place; it was "
        "given something that is not a tensor.",
        "Pass the input tensors forward wrote in place (ctx.mark_dirty(x) after x.mul_(2)), "
        "and nothing else.",
        blame="ctx:mark_dirty",
    ),
    _W(
        "custom_forward_missing",
        "custom Function",
        "You must implement the forward function for custom autograd.Function.",
        "the method meant as forward (a misspelt name), else the Function's class",
        "apply() ran the base class's forward: the Function defines no method called "
        "forward (a misspelling such as foward, or forward defined outside the class).",
        "Name the method forward, decorated with @staticmethod, with ctx as its first "
        "argument (or forward without ctx plus setup_context).",
        blame="member:forward",
    ),
    _W(
        "custom_backward_and_vjp",
        "custom Function",
        "Implementing both 'backward' and 'vjp' for a custom Function is not allowed.",
        "where the Function's class defines vjp",
        "vjp is another name for backward in a custom Function; the class defines both, so "
        "torch cannot tell which one is the derivative. It checks when backward reaches the "
        "Function.",
        "Keep one: define backward and remove vjp (or the alias vjp = backward).",
        blame="member:vjp",
    ),
    _W(
        "save_for_forward_non_tensor",
        "custom Function",
        "save_for_forward expects all arguments to be tensors; you should save non-tensors as "
        "attributes on ctx.",
        "the ctx.save_for_forward(...) call",
        "ctx.save_for_forward() keeps tensors for the forward-mode derivative (jvp) and "
        "accepts tensors (or None) only.",
        "Save numbers and other objects as attributes: ctx.factor = factor.",
    ),
    # hooks: what a hook returned, and where hooks were registered
    _W(
        "node_hook_returned_non_tuple",
        "hooks",
        "expected tuple, but hook returned 'Tensor'",
        "the return of the hook registered on the autograd node (grad_fn.register_hook)",
        "A hook on an autograd node gets the tuple of gradients the node computed for its "
        "inputs and may return a replacement: a tuple of the same length. It returned a "
        "single tensor.",
        "Return a tuple with one entry per gradient (None keeps that one): "
        "return (grad_inputs[0] * 0.5,) + grad_inputs[1:]; or register a tensor hook "
        "(tensor.register_hook) to change one tensor's gradient.",
        blame="hook",
    ),
    _W(
        "node_hook_arity",
        "hooks",
        "hook 'scale_grads' has returned an incorrect number of values (got 3, but expected 2)",
        "the return of the hook torch names",
        "A hook on an autograd node (or a module backward hook) must return as many "
        "gradients as it was given, one per input of the node; it returned more or fewer.",
        "Return a tuple as long as grad_inputs, None for the entries left unchanged.",
        blame="hook",
    ),
    _W(
        "hook_replaces_none_grad",
        "hooks",
        "can't replace a None gradient with a non-None value",
        "the return of the hook registered on the autograd node",
        "A hook on an autograd node returned a tensor in a position where the node computed "
        "no gradient (None: an input that needs none, like a constant). torch cannot send "
        "a gradient down an edge that does not exist.",
        "Return None where grad_inputs holds None: "
        "return tuple(None if g is None else g * 0.5 for g in grad_inputs).",
        blame="hook",
    ),
    _W(
        "forward_pre_hook_return",
        "hooks",
        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got",
        "the return of the forward pre-hook",
        "A forward pre-hook registered with with_kwargs=True may replace the call's "
        "arguments, and must then return both: a tuple (new_args, new_kwargs). It returned "
        "something else (a tensor, or the args alone).",
        "return (new_args, kwargs), with new_args a tuple: ((x + noise,), kwargs); or return "
        "None to keep the arguments.",
        blame="hook",
    ),
    _W(
        "mixed_backward_hooks",
        "hooks",
        "Cannot use both regular backward hooks and full backward hooks on a single Module.",
        "the other backward hook's registration on the same module",
        "A module can carry either legacy backward hooks (register_backward_hook) or full "
        "ones (register_full_backward_hook), not both. The legacy kind is deprecated and "
        "sees the gradients of the module's last op only.",
        "Register every backward hook of the module with register_full_backward_hook "
        "(change the legacy registration).",
        blame="registered",
    ),
    _W(
        "pack_hook_inplace",
        "hooks",
        "A saved tensor pack hook is modifying its input in place.",
        "the in-place op of the pack hook given to saved_tensors_hooks",
        "The pack hook of saved_tensors_hooks receives the very tensor the forward op "
        "saved, which is also that op's input or output; writing it in place changes the "
        "forward's values behind autograd's back.",
        "Return a new tensor from the pack hook (tensor * 0.5, tensor.to(...), or "
        "tensor.clone() before changing it) and leave its input alone.",
        blame="pack",
    ),
    # autograd.functional
    _W(
        "functional_strict_independent",
        "autograd.functional",
        "Output 0 of the user-provided function is independent of input 0. This is not "
        "allowed in strict mode.",
        "the return of the function given to autograd.functional",
        "With strict=True, jacobian / hessian / vjp refuse a function whose output does not "
        "depend on an input: its derivative would be all zeros, which usually means the "
        "function ignores that input by mistake (a global used instead, a detach).",
        "Compute the output from the inputs passed to the function; or pass strict=False to "
        "accept zeros for the independent parts.",
        blame="function",
    ),
    _W(
        "functional_strict_no_grad",
        "autograd.functional",
        "Output 0 of the user-provided function does not require gradients.",
        "the return of the function given to autograd.functional",
        "With strict=True, the function's output must be computed differentiably from its "
        "inputs; this output carries no graph at all (built under no_grad, detached, or "
        "from new tensors).",
        "Build the output from the inputs with differentiable ops, without detach() or "
        "no_grad inside the function.",
        blame="function",
    ),
    _W(
        "functional_strategy",
        "autograd.functional",
        "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
        "supported together.",
        "the jacobian / hessian call",
        "Two options of the call exclude each other: strict mode needs the reverse-mode, "
        "one-row-at-a-time computation that vectorize=True and the forward-mode strategy "
        "replace.",
        "Drop one of the two options named in the message.",
    ),
    # leaving autograd, AMP
    _W(
        "deepcopy_non_leaf",
        "leaving autograd",
        "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
        "protocol at the moment.",
        "the deepcopy call",
        "copy.deepcopy() of a tensor computed from others (a non-leaf): its graph cannot be "
        "copied. With a module, an attribute holds such a tensor (weight_norm, a tensor "
        "cached in forward).",
        "Deep-copy a detached value (t.detach().clone()), or the module before the forward "
        "that stores computed tensors on it.",
    ),
    _W(
        "scaler_closure",
        "AMP",
        "Closure use is not currently supported if GradScaler is enabled.",
        "the scaler.step(optimizer, closure=...) call",
        "GradScaler.step cannot re-run a closure: the scaled backward and the inf check "
        "happen outside step().",
        "Call the closure's work yourself (zero_grad, forward, scaler.scale(loss)"
        ".backward()) and then scaler.step(optimizer) without a closure.",
    ),
    # forward-mode AD, torch.func
    _W(
        "make_dual_twice",
        "forward-mode AD",
        "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
        "same level 0 is not supported.",
        "the make_dual call",
        "make_dual was given a tensor that is already dual at the current level (the result "
        "of an earlier make_dual, or computed from one): it has a tangent already.",
        "Make the dual from the plain primal (fwAD.unpack_dual(t).primal), or keep the "
        "first dual tensor and its tangent.",
    ),
    _W(
        "func_jvp_strict",
        "torch.func",
        "jvp(f, primals, tangents, strict=True): The output of f is independent of the "
        "inputs. This is not allowed with strict=True.",
        "the return of the function given to jvp",
        "With strict=True, torch.func.jvp refuses a function whose output does not depend "
        "on its primals: the tangent would be zero, which usually means f reads a global "
        "or a detached copy instead of its argument.",
        "Compute the output from the primals passed to f; or drop strict=True to accept a "
        "zero tangent.",
        blame="function",
    ),
    _W(
        "func_vjp_cotangent_structure",
        "torch.func",
        "Expected pytree structure of cotangents to be the same as pytree structure of "
        "outputs to the function.",
        "the call of the vjp function",
        "The function vjp returned needs one cotangent per output of f, in the same nesting "
        "(a tuple for a tuple); it was given another structure.",
        "Pass cotangents shaped like f's outputs: vjp_fn((torch.ones_like(a), "
        "torch.ones_like(b))) for an f returning (a, b).",
    ),
    # hooks on optimizers and on saved tensors
    _W(
        "optimizer_hook_return",
        "optimizer",
        "<function SGD.step> must return None or a tuple of (new_args, new_kwargs), but got 0.1.",
        "the return of the optimizer's step pre-hook",
        "A step pre-hook (register_step_pre_hook) may replace step()'s arguments and must "
        "then return (new_args, new_kwargs); it returned something else, often a value it "
        "meant only to log.",
        "Return None from the hook (log inside it instead of returning the value).",
        blame="hook",
    ),
    _W(
        "allow_mutation_backward_outside",
        "hooks",
        "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in "
        "which the graph was originally recorded.",
        "the backward() call after the block",
        "A graph recorded under allow_mutation_on_saved_tensors() keeps copies of the "
        "tensors mutated in it only while the block is open; backward after the block "
        "cannot find them.",
        "Call backward() inside the with block that recorded the forward.",
        blame="backward",
    ),
    # what a custom Function's backward or jvp returned
    _W(
        "complex_grad_for_real_input",
        "custom Function",
        "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
        "grad_is_complex) to be true, but got false.",
        "the return of the custom Function's backward",
        "A custom Function's backward returned a complex gradient for a real input (or a "
        "real one for a complex input). The gradient of each input must have that input's "
        "kind of dtype; torch checks after backward returned.",
        "Return a gradient of the input's dtype kind: take .real of a complex result for a "
        "real input (torch.view_as_real / .real), or promote the input to complex in forward.",
        blame="returns:backward",
    ),
    _W(
        "custom_jvp_not_view",
        "forward-mode AD",
        "A custom Function's forward is returning a view (or an input as-is) but the jvp is "
        "not returning a view.",
        "the return of the custom Function's jvp",
        "forward returns a view of an input (or the input itself), so forward-mode AD needs "
        "the tangent to be the same view of the input's tangent; jvp returned a new tensor.",
        "Return the same view of the tangent in jvp (tangent.view_as(tangent) for "
        "x.view_as(x)), or return a new tensor from forward (x.clone()).",
        blame="returns:jvp",
    ),
    _W(
        "custom_jvp_not_inplace",
        "forward-mode AD",
        "An inplace custom Function is not modifying the forward mode gradients inplace.",
        "the return of the custom Function's jvp",
        "forward modified an input in place (ctx.mark_dirty), so forward-mode AD needs jvp "
        "to update that input's tangent in place and return it; jvp returned a new tensor.",
        "In jvp, change the tangent in place and return it (tangent.mul_(2); return tangent).",
        blame="returns:jvp",
    ),
    # saved tensors' own hooks
    _W(
        "saved_tensor_register_hooks_twice",
        "hooks",
        "Calling register_hooks on a saved tensor whose hooks have already been set.",
        "the second register_hooks call",
        "A saved tensor carries one pair of pack/unpack hooks; this one had its pair already.",
        "Register one pair per saved tensor (compose the two pairs into one), or use "
        "torch.autograd.graph.saved_tensors_hooks around the forward.",
    ),
    _W(
        "saved_tensor_register_hooks_freed",
        "hooks",
        "Calling register_hooks on a saved tensor after it has been freed.",
        "the register_hooks call after backward",
        "backward() freed the graph's saved tensors, so there is nothing left to hook.",
        "Register the hooks before backward(), or run backward with retain_graph=True.",
    ),
)
