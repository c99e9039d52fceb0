"""Paper Figure "λ Sensitivity": final Pass@1 against FPA's extrapolation strength λ, on the
first benchmark of the first table (the paper's MATH500) and on the table's average; Off-RL
is FPA at λ = 0. Each point is one method of the config (a λ sweep expands into them), mean
± std over seeds, at its λ on an axis of evenly spaced λ."""

from __future__ import annotations

from fpa.figures.figure import Figure, FigureInputs


def draw(inputs: FigureInputs):
    import textwrap

    import numpy as np

    from fpa.figures import ROLE_STYLES
    from fpa.figures.data import read_evals
    from fpa.figures.style import color, panels

    fig, axes = panels(2)
    roles = sorted(inputs.evals, key=lambda role: inputs.lam[role])
    # one λ per tick, evenly spaced: the paper's λ (0, 0.5, ..., 10) span decades, and a label per
    # point ran into its neighbours' where they crowd
    positions, ticks = range(len(roles)), [f"{inputs.lam[role]:g}" for role in roles]
    main = inputs.benchmarks[0]
    per_role = {role: {b: read_evals(inputs.evals[role][b]) for b in inputs.benchmarks} for role in roles}
    for ax, title, values in (
        (axes[0], main, [per_role[role][main] for role in roles]),
        (axes[1], textwrap.fill("Avg. over " + ", ".join(inputs.benchmarks), 40),
         [np.mean([per_role[role][b] for b in inputs.benchmarks], axis=0) for role in roles]),
    ):
        means = [v.mean() for v in values]
        stds = [v.std(ddof=1) if len(v) > 1 else 0.0 for v in values]
        ax.errorbar(positions, means, yerr=stds, color=color(ROLE_STYLES["fpa"]), marker="o", capsize=3,
                    linewidth=1.8)
        ax.set_xticks(positions, ticks)
        ax.set(title=title, xlabel="λ (0: Off-RL)", ylabel="Pass@1 (%)")
    return fig

FIGURES = (Figure(
    name="lambda_sensitivity",
    roles=(),
    caption="λ sensitivity (paper Figure 'λ Sensitivity'): final Pass@1 on the first table's first benchmark "
            "(left) and on the table's average (right) against FPA's λ; Off-RL is λ = 0. Mean ± std over seeds.",
    draw=draw,
    uses_metrics=False,
    uses_evals=True,
    objectives=("offrl", "fpa"),
),)
