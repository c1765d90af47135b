"""Case 911 - language model with tied input/output embeddings (correct)

Source: https://github.com/pytorch/pytorch/issues/62264
        "the problem is that your model's `decoder.in_embed.weight` and `decoder.out_embed.weight` reference the same Parameter"
Category: correct (invariant 6)
EXPECT: no findings

Reported symptom:
    None. The output projection shares its weight with the token embedding.

Root cause:
    None. The tie is made once in __init__ by assigning the same Parameter; the
    checkpoint is loaded with the default copy mode (which preserves aliasing)
    before the optimizer is built, so the shared parameter appears once in
    parameters() and receives the sum of both gradients.

Ground truth a good tool should report:
    Nothing. One parameter used at two places is the intended weight tying.
"""


def load_pretrained(model, state):
    model.load_state_dict(state)
    return model
