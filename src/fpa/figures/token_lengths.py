"""Paper Figure "Token lengths for each dataset" (appendix "Pilot Experiment Details"): how long
the trajectories of the gradient-entanglement pilot are, per dataset: IMDb's are one token, HH's
moderately long, MATH's long. Drawn from the same pairs as ``gradient_entanglement`` (both
trajectories of each pair, tokenised by the base model as the analysis measured them; the
offline data's pairs are "MATH" under the config's dataset), so the lengths are those of the
pairs whose gradients the pilot compares."""

from __future__ import annotations

from fpa.figures.figure import BASE_ROLE, Figure, FigureInputs
from fpa.figures.gradient_entanglement import variant_label

# the offline data's trajectories cut to their answer are a contrast of the analysis, not a dataset
NOT_A_DATASET = ("answer_only",)


def draw(inputs: FigureInputs):
    import numpy as np
    import pandas as pd

    from fpa.figures.style import LEGEND, color, panels

    rows = pd.concat([pd.read_csv(path) for path in inputs.analyses[BASE_ROLE]], ignore_index=True)
    rows = rows[~rows["variant"].isin(NOT_A_DATASET)]
    fig, (ax,) = panels(1, width=5.8, height=3.8)
    lengths = {variant: np.concatenate([part["tokens_correct"], part["tokens_incorrect"]])
               for variant, part in rows.groupby("variant", sort=False)}
    # log-spaced bins from one token to the longest trajectory: the datasets span three decades
    bins = np.geomspace(1, max(2, max(values.max() for values in lengths.values())) + 1, 40)
    for index, (variant, values) in enumerate(lengths.items()):
        ax.hist(values, bins=bins, color=color(index), alpha=0.6,
                label=f"{variant_label(variant)} (median {np.median(values):.0f} tokens, n = {len(values)})")
    ax.set(title="trajectory lengths", xlabel="tokens per trajectory (preferred and dispreferred)",
           ylabel="trajectories", xscale="log")
    ax.legend(fontsize=8, **LEGEND)
    return fig


FIGURES = (Figure(
    name="token_lengths",
    roles=(),
    caption="Token lengths for each dataset (paper Figure 'Token lengths for each dataset'): the lengths of both "
            "trajectories of the pairs the gradient-entanglement pilot measures, under the base model's tokenizer "
            "(the offline data's pairs, and the preference datasets the config names, e.g. IMDb and HH). Pooled "
            "over seeds.",
    draw=draw,
    uses_metrics=False,
    analysis="entanglement",
    of_base=True,
),)
