"""gradprobe's own finding codes and their fixed texts: GP1xx blame (autograd errors and
their causes), GP2xx numerics / watch, GP3xx hooks, GP4xx saliency and distributed (GP41x),
GP5xx torch.compile. Each code has its page ``docs/findings/gp101.md``;
:data:`gradprobe.findings.CODES` is the registry built from this table (plus the codes
plug-in checks bring)."""

from __future__ import annotations

from dataclasses import dataclass

from gradprobe._codes_errors import ERROR_CATALOGUE_CODES
from gradprobe._codes_scale import COMPILE_CODES, COMPILE_NOTES, DISTRIBUTED_CODES
from gradprobe._codes_step import STEP_CODES

__all__ = ["BUILTIN_CODES", "Code"]


@dataclass(frozen=True)
class Code:
    """One registered finding code and its fixed texts; ``doc_anchor`` names its page
    (``gp101`` for ``docs/findings/gp101.md``), or is a full URL for a plug-in's code.

    A ``note`` code says what a recording could not observe, not that something is wrong:
    its findings are reported as notes (``Recording.notes``, ``"notes"`` in JSON), never
    among the findings, so a correct script stays free of findings."""

    code: str
    kind: str
    title: str
    explanation: str
    hint: str
    doc_anchor: str
    note: bool = False


def _code(
    code: str, kind: str, title: str, explanation: str, hint: str, *, note: bool = False
) -> Code:
    return Code(code, kind, title, explanation, hint, code.lower(), note)


BUILTIN_CODES: tuple[Code, ...] = (
    # GP1xx: blame, autograd errors and their causes
    _code(
        "GP101",
        "inplace_modified_saved_tensor",
        "a tensor saved for backward was modified in place",
        "An operation saved a tensor for its backward formula, and the tensor was written in "
        "place afterwards (its version counter moved on), so backward() cannot compute the "
        "gradient from the value the forward pass used.",
        "Make the write out of place (y = y.relu() instead of y.relu_(), "
        "nn.ReLU(inplace=False), x = x.clone() before x[i] = ...), or do the write before the "
        "tensor is used.",
    ),
    _code(
        "GP102",
        "leaf_modified_inplace",
        "a leaf tensor that requires grad was modified in place",
        "In-place operations on a leaf that requires grad (a parameter, or an input made with "
        "requires_grad=True), or on a view of one, are refused: autograd would lose the "
        "value whose gradient it is supposed to compute.",
        "Write under torch.no_grad() if this is an update or an initialization "
        "(with torch.no_grad(): w.add_(delta)), or compute a new tensor (w2 = w + delta).",
    ),
    _code(
        "GP103",
        "backward_through_freed_graph",
        "backward through a graph that was already freed",
        "The first backward() (or autograd.grad) released the tensors this graph saved; a "
        "second backward through any part of it cannot run.",
        "Build a fresh graph each iteration (recompute the forward pass), detach values you "
        "carry across iterations (h = h.detach()), or pass retain_graph=True to the first "
        "backward() if you really need two.",
    ),
    _code(
        "GP104",
        "backward_without_grad_fn",
        "backward on a tensor that does not require grad",
        "The tensor has no grad_fn and does not require grad, so there is no graph to "
        "backpropagate through: it was computed under torch.no_grad()/inference_mode, "
        "from .detach()/.item()/.numpy() values, or from tensors that never required grad.",
        "Find where the graph was cut: remove the no_grad/detach on the path from the "
        "parameters to the loss, and make sure the parameters have requires_grad=True.",
    ),
    _code(
        "GP105",
        "nonscalar_backward",
        "backward on a non-scalar tensor without a gradient",
        "backward() with no argument only works on a tensor with a single element; for a "
        "vector or matrix autograd needs the gradient to start from.",
        "Reduce to a scalar first (loss.mean() or loss.sum()), or pass the starting "
        "gradient: out.backward(torch.ones_like(out)).",
    ),
    _code(
        "GP106",
        "grad_of_non_leaf",
        ".grad of a non-leaf tensor was read",
        "Autograd only fills .grad of leaf tensors; the .grad of an intermediate result is "
        "None unless retain_grad() was called on it before backward().",
        "Call t.retain_grad() before backward(), use a tensor hook, or read .grad of the "
        "leaf (the parameter or input) instead.",
    ),
    _code(
        "GP107",
        "parameter_without_grad",
        "a parameter got no gradient",
        "After backward() the parameter's .grad is still None: the loss does not depend on "
        "it, or the path was cut (detach, no_grad, integer ops, a module not called).",
        "Check that the module owning it is used in forward and that nothing on the path "
        "detaches; if it is intentionally unused, freeze it with requires_grad_(False).",
    ),
    _code(
        "GP108",
        "saved_tensor_mutated_without_version_bump",
        "a saved tensor was changed without bumping its version",
        "The tensor was written through .data, .numpy() or with saved_tensors_hooks "
        "installed, which bypass the version counter: backward() does not fail but uses "
        "the new values, so the gradient is silently wrong.",
        "Do not write through .data or .numpy() on tensors in the graph; use "
        "with torch.no_grad(): t.copy_(...) so autograd can detect the change, or clone.",
    ),
    _code(
        "GP109",
        "parameters_changed_before_backward",
        "parameters were updated between forward and backward",
        "A parameter saved by the forward pass was modified in place (usually by "
        "optimizer.step()) before backward() ran through the graph that saved it.",
        "Call loss.backward() before optimizer.step(), and compute a new forward pass after "
        "every step; do not backward twice through one graph around a step.",
    ),
    _code(
        "GP110",
        "grad_zeroed_in_accumulation",
        "gradients were zeroed inside an accumulation loop",
        "optimizer.zero_grad() ran between micro-batches that were meant to accumulate, so "
        "only the last micro-batch contributes to the step.",
        "Call zero_grad() once per optimizer step: after step(), not before every backward().",
    ),
    _code(
        "GP111",
        "freeze_did_nothing",
        "freezing did not stop the parameter from training",
        "The parameter was meant to be frozen but still receives gradients or updates: "
        "requires_grad was set on a copy or misspelt, eval() was called as if it froze "
        "(it only switches Dropout and BatchNorm), or the optimizer still holds it with "
        "weight decay or momentum.",
        "Call requires_grad_(False) on the module's own parameters before building the "
        "optimizer, and leave frozen parameters out of the optimizer's param groups.",
    ),
    _code(
        "GP112",
        "graph_kept_alive_across_iterations",
        "a graph is kept alive across iterations",
        "A tensor carried from one iteration to the next (a running loss, a hidden state, a "
        "list of outputs) still has a grad_fn, so every iteration's graph stays in memory "
        "and backward may reach into freed graphs.",
        "Store loss.item() or t.detach() for logging and for state carried across "
        "iterations (truncated BPTT: h = h.detach()).",
    ),
    _code(
        "GP113",
        "constant_loss_term",
        "a loss term carries no gradient",
        "A term added to the loss was computed through an operation that cuts the graph "
        "(argmax, a comparison, .item(), torch.tensor(...), a detach): it changes the "
        "loss value but contributes nothing to any gradient, so training ignores it.",
        "Use a differentiable surrogate for the term (softmax probabilities instead of "
        "argmax, a soft mask instead of ==), or drop it if it is only a metric.",
    ),
    _code(
        "GP114",
        "inference_tensor_in_autograd",
        "a tensor made under inference_mode was used in autograd",
        "torch.inference_mode() makes inference tensors, which have no version counter and "
        "can never be saved for backward: using one in a computation that builds a graph "
        "(a layer that trains on precomputed features) raises an error.",
        "Compute the tensor under torch.no_grad() instead of torch.inference_mode(), or "
        "make a normal copy outside the block (feats = feats.clone()).",
    ),
    _code(
        "GP115",
        "backward_on_leaf",
        "backward() was called on a leaf tensor",
        "A tensor made directly (torch.tensor(loss.item(), requires_grad=True), or a fresh "
        "tensor with requires_grad=True) has no graph behind it: backward() on it runs "
        "without error but reaches no parameter, so nothing trains. Usually done to silence "
        "'element 0 of tensors does not require grad', whose real cause is earlier.",
        "Call backward() on the loss computed from the model's output; if that loss does "
        "not require grad, find where its graph was cut (argmax, .item(), .detach(), "
        "torch.no_grad()) and make that step differentiable.",
    ),
    _code(
        "GP116",
        "parameter_not_in_optimizer",
        "parameters get gradients but no optimizer updates them",
        "The optimizer holds the parameters it was given when it was built. A layer kept in "
        "a plain Python list (not registered in its module) or created after the optimizer "
        "(a replaced classification head) gets gradients that no step() ever applies.",
        "Register sub-layers with nn.ModuleList/nn.ModuleDict, and build the optimizer after "
        "the model is final (or call optimizer.add_param_group for new parameters).",
    ),
    _code(
        "GP117",
        "state_dict_loaded_nothing",
        "load_state_dict(strict=False) loaded nothing",
        "Every key of the state dict was unexpected: no name matched the model, usually "
        "because the checkpoint was saved from a DistributedDataParallel/DataParallel "
        "wrapper ('module.' prefix) or a compiled module ('_orig_mod.'). With strict=False "
        "nothing fails; the model keeps its random weights.",
        "Strip the prefix from the keys before loading, and check the returned "
        "missing_keys and unexpected_keys.",
    ),
    _code(
        "GP118",
        "loss_target_requires_grad",
        "a loss was given a target that requires grad",
        "The target of mse_loss/l1_loss/kl_div/... carries a graph, so backward() also "
        "moves whatever computed it: a DQN's TD target from the online network, an EMA "
        "teacher run with gradients, a missing stop-gradient. Old PyTorch refused this; "
        "today it runs and trains the wrong thing.",
        "Compute the target under torch.no_grad(), or pass target.detach().",
    ),
    _code(
        "GP119",
        "clip_before_backward",
        "gradients were clipped before backward()",
        "clip_grad_norm_/clip_grad_value_ ran before the backward() whose gradients the next "
        "optimizer step applies, so it clipped old or zeroed gradients and the step is "
        "unclipped.",
        "Call the clipping function after loss.backward() and before optimizer.step().",
    ),
    _code(
        "GP120",
        "parameter_grad_zero",
        "a parameter's gradient is zero everywhere",
        "backward() reached the parameter, but every element of its .grad is zero: its "
        "effect on the loss is multiplied by zero (a dead ReLU, a zero mask, a constant "
        "branch) or cancelled exactly (a bias followed by BatchNorm, which subtracts the "
        "batch mean).",
        "If it is expected (a conv or linear bias before BatchNorm), leave the parameter out "
        "of the check or build the layer with bias=False; otherwise find the operation that "
        "zeroes its gradient.",
    ),
    _code(
        "GP121",
        "backward_disagrees_with_gradcheck",
        "a backward disagrees with the numerical Jacobian",
        "gradcheck compared the gradient autograd computes with finite differences of the "
        "forward and they differ: a custom autograd.Function's backward is not the "
        "derivative of its forward, or a hook changes the gradient.",
        "Fix the named backward (differentiate its forward again, check every input's "
        "gradient and its shape), or make the hook return None if it should only observe.",
    ),
    _code(
        "GP122",
        "custom_function_returned_none",
        "a custom Function returned no gradient for an input that needs one",
        "autograd.Function.backward returned None for an input that requires grad. Autograd "
        "treats None as a zero gradient without a warning, so a parameter passed through the "
        "Function never trains.",
        "Return a gradient for each input whose ctx.needs_input_grad[i] is True (None only "
        "for the others), and check the Function with torch.autograd.gradcheck.",
    ),
    _code(
        "GP123",
        "log_prob_weight_requires_grad",
        "a policy-gradient weight requires grad",
        "A policy-gradient term log_prob(action) * weight (advantage, return, reward, soft "
        "target) was built with a weight that still carries the graph of another network, "
        "such as the critic behind `advantage = returns - values`. backward() then also "
        "trains that network through the product, with gradient -log_prob times the "
        "weight's gradient: the value head is pulled wherever log-probabilities rise, and "
        "its own loss fights it. No error, no NaN; the baseline drifts.",
        "Detach the weight: `advantage = (returns - values).detach()`, and train the critic "
        "with its own loss on the undetached values.",
    ),
    _code(
        "GP124",
        "inplace_on_untracked_view",
        "an untracked view was modified in place",
        "An in-place operation wrote to a view that autograd cannot rebase onto its base: "
        "one of several views returned by one call (split, chunk, unbind), a view made "
        "under no_grad and written with grad mode on, or a view returned by a custom "
        "Function. PyTorch refuses, and the error names an internal node (SplitBackward0) "
        "rather than the line.",
        "Use the out-of-place version of the operation (x = x.sigmoid()), or clone() the "
        "view before writing to it.",
    ),
    _code(
        "GP125",
        "integer_requires_grad",
        "an integer tensor was asked to require grad",
        "Only floating-point and complex tensors can have gradients. An integer literal "
        "(torch.tensor(10), torch.arange(5)) makes an int64 tensor, and nn.Parameter or "
        "requires_grad=True on it fails.",
        "Create it as float: torch.tensor(10.0), torch.arange(5.0), or .float() first.",
    ),
    _code(
        "GP126",
        "requires_grad_on_non_leaf",
        "requires_grad set on a computed tensor",
        "requires_grad can only be set on leaves (tensors you created). A tensor computed "
        "by an operation requires grad exactly when its inputs do; the flag cannot be "
        "switched on or off on it.",
        "To read its gradient call .retain_grad() before backward; to stop gradients use "
        ".detach(); to start a new leaf from its value use .detach().requires_grad_().",
    ),
    _code(
        "GP127",
        "clip_scaled_gradients",
        "gradients were clipped while still scaled",
        "With mixed precision, scaler.scale(loss).backward() leaves every gradient "
        "multiplied by the loss scale (65536 at the start). Clipping before "
        "scaler.unscale_(optimizer) measures that inflated norm, so the clip fires on "
        "every step and the real update shrinks by the scale factor; training crawls "
        "without an error.",
        "Call scaler.unscale_(optimizer) after backward() and before clip_grad_norm_ / "
        "clip_grad_value_, then scaler.step(optimizer) and scaler.update().",
    ),
    _code(
        "GP128",
        "custom_backward_ignores_grad_output",
        "a custom backward ignores the gradient it is given",
        "The backward of a torch.autograd.Function never reads its grad_output argument and "
        "still returns gradients: it returns the local derivative of forward, not "
        "grad_output times it. The chain rule then breaks at that node; the gradients behind "
        "it are right only when the gradient arriving happens to be all ones.",
        "Multiply by the incoming gradient: `return grad_output * local_derivative` (one "
        "grad_output per forward output), and check the Function with "
        "torch.autograd.gradcheck (gradprobe.testing.assert_gradcheck).",
    ),
    _code(
        "GP129",
        "ctx_tensor_modified_inplace",
        "a tensor kept on ctx was modified before backward",
        "A custom autograd.Function stored a tensor as a ctx attribute (ctx.x = x) instead of "
        "ctx.save_for_backward(x), and the tensor was written in place between forward and "
        "backward. Autograd checks the version counter only of tensors saved with "
        "save_for_backward, so no error is raised: backward computes with the new values.",
        "Save inputs and outputs with ctx.save_for_backward(...) and read them back with "
        "ctx.saved_tensors: the same write then raises the in-place error, which gradprobe "
        "explains. Or make the write out of place (x = x * 2 instead of x.mul_(2)).",
    ),
    _code(
        "GP130",
        "tied_weights_copied",
        "weights meant to be tied are two parameters",
        "A parameter was made as a copy of another one of the same model "
        "(nn.Parameter(other.weight.clone())), the usual way weight tying goes wrong: the "
        "two are separate leaves, each gets its own gradient, and the optimizer moves them "
        "apart from the first step on.",
        "Tie by assigning the parameter itself (self.out.weight = self.embed.weight): one "
        "tensor, one gradient (the sum of both uses), one update. If two independent copies "
        "are what you want, make the copy from .detach().clone() to say so.",
    ),
    _code(
        "GP131",
        "trained_in_eval_mode",
        "the model kept training in eval mode",
        "model.eval() was called after the model had trained (for a validation pass) and "
        "model.train() was not called again before the next optimizer steps: from then on "
        "Dropout is off and BatchNorm uses and no longer updates its running statistics "
        "while the model trains.",
        "Call model.train() at the start of every training epoch (or right after the "
        "validation pass), not once before the loop.",
    ),
    _code(
        "GP132",
        "dropout_active_in_eval",
        "functional dropout stays on in eval mode",
        "torch.nn.functional.dropout (and its 1d/2d/3d and alpha variants) takes training=True "
        "by default: called in a forward as F.dropout(x, p), it keeps dropping units after "
        "model.eval(), so evaluation and inference are random and scaled.",
        "Pass the module's mode, F.dropout(x, p, training=self.training), or use an "
        "nn.Dropout layer, which follows train() and eval().",
    ),
    _code(
        "GP133",
        "probabilities_given_to_logit_loss",
        "a loss that takes logits was given probabilities",
        "F.cross_entropy (nn.CrossEntropyLoss) applies log_softmax itself, F.nll_loss expects "
        "log-probabilities, and binary_cross_entropy_with_logits (nn.BCEWithLogitsLoss) "
        "applies sigmoid itself. Given the output of a softmax or sigmoid, the loss squashes "
        "values that are already in [0, 1] a second time: the gradients shrink and training "
        "slows down and stalls, without any error.",
        "Remove the final nn.Softmax / nn.Sigmoid (or F.softmax / torch.sigmoid) and pass "
        "the raw scores (logits) to the loss; apply it only to read off predictions. Before "
        "nll_loss, use log_softmax.",
    ),
    _code(
        "GP134",
        "gradients_not_zeroed",
        "gradients were not reset between optimizer steps",
        "backward() adds into .grad. Without zero_grad() between steps, every step updates "
        "with the sum of all gradients computed so far, so the effective learning rate grows "
        "and training diverges or oscillates, without any error.",
        "Call optimizer.zero_grad() once per step, before backward() (or right after "
        "step()). To accumulate over micro-batches on purpose, zero after each step.",
    ),
    _code(
        "GP135",
        "loss_broadcasts_target",
        "an elementwise loss broadcast its input against the target",
        "mse_loss, l1_loss, smooth_l1_loss and huber_loss broadcast input and target. An "
        "output of shape (N, 1) against a target of shape (N,) becomes (N, N): every "
        "prediction is scored against every target, and the model learns to predict the "
        "mean. torch only warns.",
        "Give the input and target the same shape: output.squeeze(-1), or target.unsqueeze(-1).",
    ),
    _code(
        "GP136",
        "requires_grad_set_after_use",
        "requires_grad was turned on after the forward pass used the tensor",
        "Autograd records the graph while the ops run. A tensor whose requires_grad is turned "
        "on after the forward already used it is not in that graph: backward never reaches "
        "it and its .grad stays None.",
        "Turn requires_grad on before the forward: x.requires_grad_() before the first use, "
        "or create the tensor with requires_grad=True.",
    ),
    _code(
        "GP137",
        "none_grad_used",
        "the script failed on a .grad that was None",
        ".grad is None until a backward() reaches the tensor: before the first backward, "
        "and for tensors the loss's graph does not contain. Code that uses it as a tensor "
        "(p.grad.zero_(), x.grad.abs()) then fails with a NoneType error.",
        "Check `if p.grad is not None` before using it, zero gradients with "
        "optimizer.zero_grad() or `p.grad = None`, and make sure the loss is computed from "
        "the tensor with gradients enabled.",
    ),
    _code(
        "GP138",
        "custom_backward_return_mismatch",
        "a custom Function's backward returned gradients that do not fit its inputs",
        "A torch.autograd.Function's backward must return one gradient per argument of its "
        "forward, in order: a tensor of the input's shape for a tensor that needs one, None "
        "for arguments that are not tensors (flags, sizes, modules). torch refuses a return "
        "with the wrong number of values, a wrong shape, or a tensor where None was due.",
        "Return exactly one value per forward argument: `return grad_x, None` for "
        "forward(ctx, x, flag); reshape each gradient to its input's shape.",
    ),
    _code(
        "GP139",
        "custom_function_without_autocast_decorators",
        "a custom Function used under autocast runs its backward without autocast",
        "Under torch.autocast, a custom Function's forward runs with autocast on (its inputs "
        "and results in bfloat16/float16), but its backward runs with autocast off: the "
        "gradient arrives in the low precision while the tensors saved in forward may be "
        "float32, and an op mixing them fails with a dtype mismatch.",
        "Decorate forward with @torch.amp.custom_fwd(device_type=...) and backward with "
        "@torch.amp.custom_bwd(device_type=...) so backward runs with forward's autocast "
        "state (or cast_inputs=torch.float32 to run the Function in float32).",
    ),
    _code(
        "GP140",
        "grad_input_not_used",
        "autograd.grad was asked for a tensor the outputs do not depend on",
        "torch.autograd.grad(outputs, inputs) raises when one of the inputs is not in the "
        "graph of the outputs: the module holding it was not called on the way to them (a "
        "task head of another task, a branch an if skipped), or the path was cut "
        "(.detach(), no_grad).",
        "Ask only for the tensors the outputs use, or pass allow_unused=True (its gradient "
        "is then None; materialize_grads=True gives zeros instead).",
    ),
    _code(
        "GP141",
        "result_discarded",
        "the result of an out-of-place operation was thrown away",
        "Tensor methods without a trailing underscore (clamp, masked_fill, add, to, relu) "
        "return a new tensor and leave their input unchanged. Called as a statement of their "
        "own, their result is thrown away and the line does nothing: the gradients are not "
        "clipped, the scores not masked, the tensor not moved.",
        "Assign the result (scores = scores.masked_fill(mask, -inf)) or use the in-place "
        "twin (grad.clamp_(-1, 1)) where writing in place is safe.",
    ),
    _code(
        "GP142",
        "clip_inside_accumulation_window",
        "gradients were clipped after every micro-batch of an accumulation window",
        "With gradient accumulation, .grad holds the running sum of the window's micro-"
        "batches until optimizer.step(). Clipping after each backward() clips partial sums: "
        "the early micro-batches are scaled down again by every later clip, so the step "
        "applies a reweighted gradient, not the clipped window gradient.",
        "Clip once per window, right before optimizer.step() (inside the `if (i + 1) % k "
        "== 0:` block).",
    ),
    _code(
        "GP143",
        "step_without_backward",
        "an optimizer stepped again with no backward() since its last step",
        "optimizer.step() applies whatever .grad holds. A second step with no backward() in "
        "between applies the same (or zeroed) gradients again: momentum and Adam's moments "
        "keep moving the weights, and the learning-rate schedule counts a step that learned "
        "nothing new.",
        "Call optimizer.step() once per backward() (or once per accumulation window): "
        "remove the extra call or move it inside the block that follows the backward.",
    ),
    _code(
        "GP144",
        "clip_saw_no_parameters",
        "gradient clipping was given no parameters",
        "clip_grad_norm_/clip_grad_value_ iterate the parameters they are given once. A "
        "generator or filter object (model.parameters(), filter(...)) that was already "
        "consumed (by the optimizer's constructor, an earlier clip) yields nothing: nothing "
        "is clipped and the returned norm is 0.",
        "Pass a list: params = [p for p in model.parameters() if p.requires_grad], and use it "
        "for both the optimizer and the clipping.",
    ),
    _code(
        "GP145",
        "module_not_registered",
        "a module kept in a plain list or dict is not part of its model",
        "nn.Module registers submodules assigned as attributes or held in nn.ModuleList / "
        "nn.ModuleDict. One kept in a plain Python list, tuple or dict still runs in "
        "forward, but model.to()/.double()/.cuda(), .parameters(), .train()/.eval() and "
        "state_dict() never see it: its weights stay on the old device or dtype and no "
        "optimizer built from model.parameters() trains them.",
        "Hold such modules in nn.ModuleList or nn.ModuleDict.",
    ),
    _code(
        "GP146",
        "tensor_attribute_not_parameter",
        "a module keeps a tensor that requires grad instead of an nn.Parameter",
        "A tensor created with requires_grad=True and assigned to a module attribute is not "
        "registered: model.parameters() leaves it out, so an optimizer built from it never "
        "updates it (its .grad fills up and nothing applies it), and .to(), state_dict() "
        "and copies of the model skip it.",
        "Wrap it: self.w = nn.Parameter(torch.zeros(...)); for a constant use "
        "self.register_buffer('w', ...).",
    ),
    _code(
        "GP147",
        "eval_is_not_no_grad",
        "an evaluation loop builds autograd graphs that are never used",
        "model.eval() switches layers such as dropout and batch norm to their inference "
        "behaviour; it does not turn gradients off. A loop that calls the model in eval "
        "mode without torch.no_grad() builds a graph on every call, with every saved "
        "activation, that no backward() ever uses: memory and time wasted, and outputs "
        "kept in a list keep all those graphs alive.",
        "Wrap the evaluation loop in `with torch.no_grad():` (or torch.inference_mode()).",
    ),
    _code(
        "GP148",
        "tie_broken_by_reassignment",
        "a parameter shared by two modules was replaced on one of them",
        "Tying weights by assignment (self.out.weight = self.embed.weight) makes both "
        "modules hold one Parameter. Assigning a new Parameter to one side later (loading "
        "pretrained embeddings by `emb.weight = other.weight`) replaces it there only: the "
        "other module keeps the old one, so the two are no longer tied and train apart.",
        "Write new values into the shared parameter in place (with torch.no_grad(): "
        "emb.weight.copy_(pretrained)), or tie again after the assignment.",
    ),
    # GP149-GP164: torch errors of the error catalogue (_codes_errors.py)
    *(_code(*entry) for entry in ERROR_CATALOGUE_CODES),
    # GP170-GP189: the training-step invariants (_codes_step.py)
    *(_code(*entry) for entry in STEP_CODES),
    _code(
        "GP199",
        "internal_error",
        "gradprobe could not finish an analysis",
        "One of gradprobe's analyses raised an exception; the other findings are unaffected.",
        "Please report it with the script that triggered it.",
    ),
    # GP2xx: numerics / watch
    _code(
        "GP201",
        "nan_in_forward",
        "NaN or infinity in the forward pass",
        "An operation produced NaN or infinite values in the forward pass; everything "
        "downstream, including the loss and every gradient, is poisoned.",
        "Look at the first operation that produced it: guard log/sqrt/division inputs "
        "(clamp, eps), lower the learning rate, or check the input data.",
    ),
    _code(
        "GP202",
        "nan_in_backward",
        "NaN or infinity in the backward pass",
        "A backward formula produced NaN or infinite gradients although its inputs were "
        "finite, e.g. sqrt or norm at 0, or a 0 * inf in a masked branch of torch.where.",
        "Add an eps inside sqrt/norm/log, and mask the input of the unsafe operation, not "
        "only its output (torch.where evaluates both branches' gradients).",
    ),
    _code(
        "GP203",
        "exploding_gradient",
        "gradients are exploding",
        "Gradient norms are very large or grow quickly from step to step; updates overshoot "
        "and training diverges.",
        "Clip gradients (torch.nn.utils.clip_grad_norm_), lower the learning rate, or add "
        "normalization / better initialization.",
    ),
    _code(
        "GP204",
        "vanishing_gradient",
        "gradients are vanishing",
        "Gradient norms shrink towards zero through the depth of the network, so the early "
        "layers barely learn.",
        "Use residual connections, normalization, non-saturating activations (ReLU/GELU "
        "instead of sigmoid/tanh) and a suitable initialization.",
    ),
    _code(
        "GP205",
        "dead_relu",
        "ReLU units that never activate",
        "Some ReLU units output zero for every input seen, so they pass no gradient and "
        "their incoming weights stop learning.",
        "Lower the learning rate, check the initialization and biases, or use LeakyReLU/GELU.",
    ),
    # GP3xx: hooks
    _code(
        "GP301",
        "legacy_backward_hook",
        "a legacy module backward hook was used",
        "Module.register_backward_hook is deprecated: it hooks only the module's last "
        "autograd node, so grad_input and grad_output can be wrong or partial.",
        "Use register_full_backward_hook (or register_full_backward_pre_hook) instead.",
    ),
    _code(
        "GP302",
        "backward_hook_on_composite_module",
        "a legacy backward hook on a module with several operations",
        "On a module made of several operations, the legacy backward hook sees the "
        "gradients of its last operation only, not of the module's inputs.",
        "Use register_full_backward_hook, which reports gradients with respect to the "
        "module's inputs and outputs.",
    ),
    _code(
        "GP303",
        "full_hook_input_without_grad",
        "a full backward hook sees None in grad_input",
        "grad_input has None for module inputs that do not require grad (such as the "
        "network's input batch), which is expected, not a bug.",
        "Handle None entries in the hook, or make the input require grad if you need its gradient.",
    ),
    _code(
        "GP304",
        "hook_bypassed_by_forward_call",
        "module hooks bypassed by calling forward() directly",
        "module.forward(x) skips __call__, so forward and backward hooks registered on the "
        "module never run.",
        "Call the module itself, module(x), not module.forward(x).",
    ),
    _code(
        "GP305",
        "full_hook_with_inplace",
        "a full backward hook on a module whose output is modified in place",
        "Full backward hooks wrap the module's outputs in a BackwardHookFunction view; "
        "modifying such an output in place afterwards raises an error or breaks the hook.",
        "Make the following operation out of place (nn.ReLU(inplace=False)), or clone the "
        "output before modifying it.",
    ),
    _code(
        "GP306",
        "hook_on_dict_output",
        "a full backward hook on a module that returns a dict",
        "Full backward hooks only see tensors returned directly or in tuples; tensors inside "
        "a dict (or other containers) are not wrapped, so the hook does not fire for them.",
        "Return a tuple of tensors from the hooked module, or hook the tensors themselves "
        "with Tensor.register_hook.",
    ),
    _code(
        "GP307",
        "hook_changed_gradient_shape",
        "a tensor hook returned a gradient of the wrong shape or type",
        "A hook registered with Tensor.register_hook may return a new gradient, which must "
        "have the shape, dtype and device of the one it received; PyTorch stops backward "
        "when it does not.",
        "Return a tensor shaped like the hook's argument (or None to keep it unchanged); "
        "store anything else you compute in the hook elsewhere.",
    ),
    # GP4xx: saliency
    _code(
        "GP308",
        "backward_hook_wrong_arity",
        "a full backward hook returned the wrong number of gradients",
        "A full backward hook must return None or a tuple as long as the grad_input it was "
        "given: one entry per positional input of forward, never the parameters' "
        "gradients (that was the legacy register_backward_hook's layout). A pre-hook "
        "returns one entry per output.",
        "Return a tuple with one entry per grad_input entry (None where there is no "
        "gradient), or None to leave the gradients unchanged; read parameter gradients "
        "from .grad or a tensor hook.",
    ),
    _code(
        "GP309",
        "hook_modified_gradient_in_place",
        "a tensor hook changed its gradient in place",
        "A tensor hook must not modify the gradient it is given. That tensor may be "
        "shared: the gradient of a sum() is one value expanded over the shape (the write "
        "fails), and an addition passes the same gradient to both inputs.",
        "Return the new gradient from the hook (return grad * 0.5) instead of writing to it "
        "(grad.mul_(0.5)).",
    ),
    _code(
        "GP310",
        "hook_registered_repeatedly",
        "the same hook is registered on a module or parameter again and again",
        "register_forward_hook and its kin, and Tensor.register_hook on a parameter, add a "
        "hook each time they are called; nothing replaces the earlier one. Registering "
        "inside forward(), a training step or a loop without removing the handle stacks "
        "hooks: every old one still runs, so a gradient they scale is scaled once per "
        "registration, a statistic they collect is counted as often, and time and memory "
        "grow with every step.",
        "Register the hook once, outside the loop, or keep the handle and call "
        "handle.remove() when done.",
    ),
    _code(
        "GP311",
        "post_accumulate_hook_argument_is_the_parameter",
        "a post-accumulate-grad hook uses its argument as if it were the gradient",
        "Tensor.register_post_accumulate_grad_hook calls the hook with the parameter itself, "
        "after its .grad was accumulated, not with the gradient (unlike register_hook). A "
        "hook that treats its argument as the gradient (clips it, offloads it, sums it) "
        "works on the weights instead.",
        "Read the gradient from the parameter inside the hook: def hook(param): g = param.grad ...",
    ),
    _code(
        "GP312",
        "backward_hook_returns_grad_output",
        "a module backward hook returns values built from grad_output",
        "What a module backward hook (register_full_backward_hook) returns replaces "
        "grad_input, the gradient with respect to the module's inputs. A hook that returns "
        "a clipped or scaled grad_output hands every earlier layer the output gradient "
        "instead; when the shapes agree nothing raises.",
        "Build the return value from grad_input (tuple(g.clamp(-1, 1) for g in grad_input)), "
        "or return None and only read.",
    ),
    _code(
        "GP401",
        "relu_invisible_to_saliency",
        "guided backprop cannot reach the ReLUs in part of the graph",
        "Guided backprop applies its rule where each ReLU's backward runs (nn.ReLU, F.relu, "
        "torch.relu, relu_, clamp(min=0), ReLU6). A TorchScript graph, a torch.compile "
        "region or a custom autograd.Function computes its own backward, so a ReLU inside "
        "it keeps its plain gradient and the map mixes guided backprop with the plain "
        "gradient there.",
        "Run the saliency method on the eager, unscripted model, and apply ReLUs outside "
        "custom autograd.Functions.",
    ),
    # GP41x: distributed training (_codes_scale.py)
    *(_code(*entry) for entry in DISTRIBUTED_CODES),
    # GP5xx: torch.compile (_codes_scale.py, with the codes for training at scale)
    *(_code(*entry, note=entry[0] in COMPILE_NOTES) for entry in COMPILE_CODES),
)
