"""Paper Figure "Validating the future-policy approximation": FPA's extrapolation from an anchor
snapshot of an Off-RL run, π̂_λ = softmax((1+λ)h_anchor − λh_ref), against the policies the run
actually reached at later snapshots; KL(π_later ‖ π̂_λ) per completion token (left) and per
completion (right) against λ, one line per later snapshot. λ = 0 is the unmodified anchor."""

from __future__ import annotations

from fpa.figures.figure import Figure, FigureInputs

ROLE = "offrl"


def draw(inputs: FigureInputs):
    import numpy as np
    import pandas as pd

    from fpa.figures.style import LEGEND, color, mean_band, panels

    frames = [pd.read_csv(path) for path in inputs.analyses[ROLE]]
    fig, axes = panels(2)
    anchor = int(frames[0]["anchor_step"].iloc[0])
    for index, target in enumerate(sorted(frames[0]["target_step"].unique())):
        per_seed = [frame[frame["target_step"] == target].sort_values("lam") for frame in frames]
        lams = per_seed[0]["lam"].to_numpy()
        for ax, column in zip(axes, ("kl_per_token", "kl_per_sequence")):
            values = np.stack([rows[column].to_numpy() for rows in per_seed])
            mean_band(ax, lams, values, label=f"step {target}", color=color(index))
            best = lams[values.mean(0).argmin()]
            ax.plot([best], [values.mean(0).min()], marker="o", color=color(index))
    for ax, unit in zip(axes, ("token", "completion")):
        ax.set(title=f"KL(later ‖ extrapolated) per {unit}", xlabel="λ (0: the anchor itself)",
               ylabel="KL (nats)", yscale="log")  # KLs span decades
        ax.legend(title=f"later snapshot of {inputs.labels[ROLE]} (anchor: step {anchor})", **LEGEND)
    return fig


def _enabled(config) -> bool:
    settings = config["future_policy"]
    return bool(settings.get("anchor_step") and settings.get("target_steps") and config["curve_benchmarks"])


FIGURES = (Figure(
    name="future_policy_validation",
    roles=(ROLE,),
    caption="Validating the future-policy approximation (paper Figure 'Validating the future-policy "
            "approximation'): KL from the policy at later snapshots of the run to the policy extrapolated from "
            "the anchor snapshot relative to the reference, π̂_λ = softmax((1+λ)h_anchor − λh_ref), full "
            "vocabulary, at the tokens of completions the later snapshot samples on the curve benchmark's "
            "prompts. λ = 0 is the anchor itself; the dot marks the closest λ. Mean ± std over seeds.",
    draw=draw,
    uses_metrics=False,
    analysis="future_policy",
    enabled=_enabled,
),)
