"""One look for every figure: readable fonts, a colour-blind-safe palette (Okabe & Ito),
method names as in the tables, a mean line with a ± std band over seeds."""

from __future__ import annotations

from typing import Sequence

import numpy as np

# Okabe & Ito (2008), without yellow (too pale on white)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
CLASS_STYLE = {"correct": "-", "incorrect": "--"}
# a panel's legend sits under it, outside the axes: no curve passes behind it
LEGEND = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "ncols": 2, "frameon": False}
RC = {"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 9,
      "xtick.labelsize": 10, "ytick.labelsize": 10, "axes.spines.top": False, "axes.spines.right": False,
      "axes.grid": True, "grid.alpha": 0.3, "savefig.dpi": 150, "figure.constrained_layout.use": True}


# after the palette's colours, each again with the next line style: a figure of every method
# (the toy's 13) tells each apart
LINESTYLES = ("-", "--", "-.", ":")


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def line_style(index: int) -> dict[str, str]:
    """The colour and line style of style ``index`` (``FigureInputs.styles``): distinct for up to
    ``len(PALETTE) * len(LINESTYLES)`` indices."""
    return {"color": color(index), "linestyle": LINESTYLES[index // len(PALETTE) % len(LINESTYLES)]}


def panels(n: int, width: float = 4.2, height: float = 3.3):
    """A figure of ``n`` side-by-side panels in the common style."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(RC):
        fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    for ax in axes[0]:
        ax.grid(True, alpha=0.3)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, list(axes[0])


def mean_band(ax, x: Sequence[float], per_seed: Sequence[Sequence[float]], *, label: str, color: str,
              linestyle: str = "-") -> None:
    """Mean over seeds as a line, ± sample std as a band (no band for one seed). NaNs are skipped."""
    values = np.asarray(per_seed, dtype=float)
    mean = np.nanmean(values, axis=0)
    ax.plot(x, mean, label=label, color=color, linestyle=linestyle, linewidth=1.8)
    if values.shape[0] > 1:
        std = np.nanstd(values, axis=0, ddof=1)
        ax.fill_between(x, mean - std, mean + std, color=color, alpha=0.18, linewidth=0)
