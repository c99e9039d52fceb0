"""Planning: the one judge of a config that every reader calls (``judge``: ``fpa check-config``, the
workflow, the other commands and the tests), the config checks that need the registries of figures,
table layouts and resources (``check_planning``), and a config's plan (``Plan``): what the workflow's
rules need, by stage as ``workflow/rules/`` is split (``fpa.planning.<stage>``: ``data``, ``toy``,
``dataset``, ``reference``, ``train``, ``evaluate``, ``code``, ``tables``, ``analysis``, ``figures``).

This package sits above ``fpa.config``, ``fpa.figures``, ``fpa.aggregation`` and
``fpa.resources``; nothing below imports it.
"""

from fpa.planning.judge import judge, judge_config
from fpa.planning.plan import Plan
from fpa.planning.validation import NAME, check_planning

__all__ = ["NAME", "Plan", "check_planning", "judge", "judge_config"]
