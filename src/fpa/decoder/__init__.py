"""Token sequences through a causal LM's body, for the trainer, the reference and the analyses alike:
one batch of encoded samples, padded or packed (``batch``), the packed row's attention (``packing``)
and the body's forward at the training's precision (``forward``). Below both training and reference."""
