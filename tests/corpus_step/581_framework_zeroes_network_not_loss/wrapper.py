"""Case 581 - the training framework clears the network, not the optimizer

Source: https://github.com/freud14/poutyne/issues/12
        "should It be self.optimizer.zero_grad() instead of self.model.zero_grad()"
Category: 3 - a step consumes exactly the gradients meant for it

Reported symptom:
    A multi-task model trained through a small Keras-like wrapper learns, but
    the learned task weights (uncertainty weighting) run away: the log
    variances grow a little more at every batch until one task is ignored.

Root cause:
    The wrapper clears gradients with self.network.zero_grad(). The optimizer
    also holds the parameters of the loss module (the per-task log
    variances), which are not part of the network, so their gradients are
    never cleared and every step applies the sum of all earlier batches'
    gradients to them.

Ground truth a good tool should report:
    The step consumes gradients of the loss module's parameters that earlier
    steps already used; the `self.network.zero_grad()` in wrapper.py should be
    `self.optimizer.zero_grad()`.
"""


class Model:
    """A small fit() loop around a network, its optimizer and its loss."""

    def __init__(self, network, optimizer, loss_function):
        self.network, self.optimizer, self.loss_function = network, optimizer, loss_function

    def _fit_batch(self, x, targets):
        self.network.zero_grad()  # <- CAUSE
        loss = self.loss_function(self.network(x), targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit_epoch(self, x, targets, batch_size):
        total = 0.0
        for start in range(0, len(x), batch_size):
            sl = slice(start, start + batch_size)
            total += self._fit_batch(x[sl], tuple(t[sl] for t in targets))
        return total / ((len(x) + batch_size - 1) // batch_size)
