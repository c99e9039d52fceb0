"""Planning: from a config to what the workflow's rules need (``Plan``), and the config
checks that need the registries of figures, table layouts and resources (``check_planning``), and
the one judge of a config that ``fpa check-config`` and the workflow both call (``judge``).

This package sits above ``fpa.config``, ``fpa.figures``, ``fpa.aggregation`` and
``fpa.resources``; nothing below imports it.
"""

from fpa.planning.judge import judge, judge_config
from fpa.planning.plan import Plan
from fpa.planning.validation import NAME, check_planning

__all__ = ["NAME", "Plan", "check_planning", "judge", "judge_config"]
