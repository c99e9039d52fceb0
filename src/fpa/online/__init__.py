"""The online RLVR methods by name (``methods.<m>.online`` in config): one module per method,
each declaring its ``ONLINE_METHODS``, found by ``fpa.registry``."""

from __future__ import annotations

from fpa.online.base import OnlineMethod, OnlineParams
from fpa.registry import Registry

ONLINE_METHODS = Registry("online method", __name__, "ONLINE_METHODS")
get_online_method = ONLINE_METHODS.lookup

__all__ = ["ONLINE_METHODS", "OnlineMethod", "OnlineParams", "get_online_method"]
