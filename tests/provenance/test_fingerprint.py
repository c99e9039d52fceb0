"""Code fingerprints follow static imports inside fpa, not the registry's run-time imports."""

from __future__ import annotations

from fpa.objectives import OBJECTIVES, module_of
from fpa.provenance.fingerprint import code_fingerprint, module_closure


def test_training_closure_excludes_method_modules():
    closure = module_closure("fpa.training.loop")
    assert "fpa.objectives.base" in closure
    method_modules = {module_of(name) for name in OBJECTIVES}
    assert not method_modules & set(closure), method_modules & set(closure)


def test_method_closure_follows_its_own_imports():
    assert "fpa.objectives.offrl" in module_closure("fpa.objectives.fpa")
    assert "fpa.objectives.dpo" in module_closure("fpa.objectives.rpo")
    assert "fpa.objectives.dpo" not in module_closure("fpa.objectives.fpa")


def test_fingerprints_differ_per_method_and_are_stable():
    fpa = code_fingerprint("fpa.training.loop", module_of("fpa"))
    offrl = code_fingerprint("fpa.training.loop", module_of("offrl"))
    assert fpa != offrl
    assert fpa == code_fingerprint("fpa.training.loop", module_of("fpa"))
    assert len(fpa) == 16
