"""Paper Figure "Gradient entanglement across datasets" (§2.2, appendix "Pilot Experiment
Details"), at the base model on its offline dataset: for (correct, incorrect) pairs of one
problem, the cosine between their score functions ∇θ log π(y|x) (left) and the two gradient
norms (right), for the full trajectories against the same pairs cut to their final answer,
and, where the config names them (``entanglement.preference``), against the (preferred,
dispreferred) pairs of the pilot's short-trajectory datasets, IMDb and HH.
The updates of objectives that raise y_w and lower y_l are +g_w and −g_l, so a positive
cosine here means opposed updates: entanglement."""

from __future__ import annotations

from fpa.figures.figure import BASE_ROLE, Figure, FigureInputs

VARIANT_LABELS = {"full": "full trajectories", "answer_only": "final answer only", "imdb": "IMDb", "hh_rlhf": "HH"}


def variant_label(variant: str) -> str:
    """The legend name of a row variant: the offline data's two, or a preference dataset's name."""
    return VARIANT_LABELS.get(variant, variant)


def draw(inputs: FigureInputs):
    import numpy as np
    import pandas as pd

    from fpa.figures.style import color, panels

    rows = pd.concat([pd.read_csv(path) for path in inputs.analyses[BASE_ROLE]], ignore_index=True)
    fig, (cosines, norms) = panels(2)
    bins = np.linspace(-1, 1, 41)
    smallest, largest = float("inf"), 0.0
    for index, variant in enumerate(rows["variant"].unique()):
        part = rows[rows["variant"] == variant]
        tokens = part["tokens_correct"].median()
        cosines.hist(part["cosine"], bins=bins, color=color(index), alpha=0.6,
                     label=f"{variant_label(variant)} (median {tokens:.0f} tokens; mean cos {part['cosine'].mean():.2f})")
        norms.scatter(part["norm_correct"], part["norm_incorrect"], s=10, color=color(index), alpha=0.6)
        largest = max(largest, part["norm_correct"].max(), part["norm_incorrect"].max())
        smallest = min(smallest, part["norm_correct"].min(), part["norm_incorrect"].min())
    norms.plot([smallest, largest], [smallest, largest], color="grey", linewidth=1, linestyle=":")
    cosines.set(title="cos(∇log π(y_w|x), ∇log π(y_l|x))", xlabel="cosine", ylabel="pairs")
    norms.set(title="score-function norms", xlabel="‖∇log π(y_w|x)‖ (correct)",
              ylabel="‖∇log π(y_l|x)‖ (incorrect)", xscale="log", yscale="log")
    # a variant has one colour in both panels: one legend under both, as wide as the figure (a legend
    # under each panel ran into the other's, and left the space between the panels empty)
    fig.legend(handles=cosines.get_legend_handles_labels()[0], loc="outside lower center", ncols=2,
               frameon=False, fontsize=8)
    return fig

FIGURES = (Figure(
    name="gradient_entanglement",
    roles=(),
    caption="Gradient entanglement (paper Figure 'Gradient entanglement across datasets'), at the base model on "
            "(correct, incorrect) pairs of one problem from its offline dataset: the cosine between the two "
            "trajectories' score functions ∇θ log π(y|x) (left; the updates are +g_w and −g_l, so a positive "
            "cosine means opposed updates) and their norms (right), full trajectories against the same pairs "
            "cut to the final boxed answer and, where the config names them, the (preferred, dispreferred) pairs "
            "of preference datasets (IMDb, HH). Pairs pooled over seeds (each seed draws its own pairs).",
    draw=draw,
    uses_metrics=False,
    analysis="entanglement",
    of_base=True,
),)
