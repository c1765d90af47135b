"""Case 550 - a per-step learning-rate decay helper called inside the batch loop

Source: https://github.com/amoudgl/pygoturn/issues/16
        "when itr > 0 and itr % args.lr_decay_step == 0, the lr should become 0.1*lr.
         However, the lr will continue decreasing until done==1. And the number of
         decreasing is related with batchsize."
Category: 4 - a step changes what it should and nothing else

(see train.py)
"""


def exp_lr_scheduler(optimizer, gamma):
    """Decay the learning rate of every group by gamma."""
    for param_group in optimizer.param_groups:
        param_group["lr"] = param_group["lr"] * gamma
    return optimizer
