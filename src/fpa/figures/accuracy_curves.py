"""Accuracy through training of every method (paper Figure 1, right): Pass@1 on the curve
benchmark at each snapshot, step 0 being the base model. A method added to the config adds
its curve here; nothing else re-runs."""

from __future__ import annotations

from fpa.figures.figure import Figure, FigureInputs

LEGEND_INSIDE_MAX = 6  # more methods than this and the legend would cover the curves: it goes beside them


def draw(inputs: FigureInputs):
    from fpa.figures.panels import accuracy_panel, add_legends
    from fpa.figures.style import panels

    roles = inputs.in_style_order(inputs.curves)
    beside = len(roles) > LEGEND_INSIDE_MAX
    fig, (accuracy,) = panels(1, width=7.5 if beside else 5.5, height=3.8)
    accuracy_panel(accuracy, inputs, roles)
    if beside:
        fig.legend(loc="outside right upper", frameon=False)
    else:
        add_legends((accuracy,))
    return fig


FIGURES = (Figure(
    name="accuracy_curves",
    roles=(),
    caption="Accuracy through training of every method (paper Figure 1, right): Pass@1 on the curve benchmark "
            "at each snapshot (step 0: the base model), mean ± std over seeds.",
    draw=draw,
    uses_curves=True,
),)
