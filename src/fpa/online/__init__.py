"""The online RLVR methods by name (``methods.<m>.online`` in config): one module per method,
each defining ``METHOD``; the registry is built from the modules of this package."""

from __future__ import annotations

import importlib
import pkgutil

from fpa.online.base import OnlineMethod, OnlineParams

# modules of the package that are not methods (the trainer imports TRL: never at registry time)
_SUPPORT_MODULES = {"base", "trainer", "groups", "reward", "run"}


def _discover() -> dict[str, OnlineMethod]:
    methods = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _SUPPORT_MODULES:
            method = importlib.import_module(f"{__name__}.{info.name}").METHOD
            methods[method.name] = method
    return dict(sorted(methods.items()))


ONLINE_METHODS: dict[str, OnlineMethod] = _discover()


def get_online_method(name: str) -> OnlineMethod:
    try:
        return ONLINE_METHODS[name]
    except KeyError:
        raise ValueError(f"unknown online method {name!r}; expected one of {sorted(ONLINE_METHODS)}") from None


__all__ = ["ONLINE_METHODS", "OnlineMethod", "OnlineParams", "get_online_method"]
