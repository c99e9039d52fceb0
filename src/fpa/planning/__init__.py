"""Planning: from a validated config to what the workflow's rules need (``Plan``)."""

from fpa.planning.plan import Plan

__all__ = ["Plan"]
