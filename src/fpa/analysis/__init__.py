"""Analyses behind the paper's mechanism figures, one module each: how well the extrapolated
policy predicts later checkpoints (``future_policy``) and how opposed the score-function
gradients of correct and incorrect trajectories are (``entanglement``)."""
