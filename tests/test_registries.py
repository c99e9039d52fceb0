"""The four registries (``fpa.registry``): every record a module of a family's package declares is
registered, by that module; a module that declares none is no member; another package's module is a
member through the family's entry-point group; the code benchmarks' task
files are entries of the catalog. (The schema enums against the registries: tests/workflow/test_config.py.)"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import textwrap

import pytest

from fpa.catalog import CATALOG, CODE_SECTION, read_benchmarks_config
from fpa.registry import Registry

# registry -> the package of its members and the record types they declare
FAMILIES = {
    "OBJECTIVES": ("fpa.objectives", "fpa.objectives.base:Objective"),
    "ONLINE_METHODS": ("fpa.online", "fpa.online.base:OnlineMethod"),
    "FIGURES": ("fpa.figures", "fpa.figures.figure:Figure"),
    "GRADERS": ("fpa.grading", "fpa.grading.grader:Grader", "fpa.grading.code.bench:CodeBench"),
}


def _load(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def declared_records(package: str, types: tuple[type, ...]) -> list[tuple[str, object]]:
    """``(module, record)`` for each record of ``types`` that a module of ``package`` (subpackages
    included) holds at module level, alone or in a tuple."""
    found = []
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, types):
                    found.append((info.name, item))
    return found


@pytest.mark.parametrize("registry_name", sorted(FAMILIES))
def test_every_declared_record_is_registered_by_its_module(registry_name):
    package, *targets = FAMILIES[registry_name]
    registry = getattr(importlib.import_module(package), registry_name)
    declared = declared_records(package, tuple(_load(target) for target in targets))
    unregistered = [f"{module}: {record.name}" for module, record in declared
                    if registry.get(record.name) is not record]
    assert not unregistered, f"declared but not in {package}'s {registry_name}: {unregistered}"
    declared_by = {(module, record.name) for module, record in declared}
    assert {(registry.module_of(name), name) for name in registry} <= declared_by


def test_the_grader_registry_loads_no_harness_package():
    """Planning reads the graders' records (which run code, which module to fingerprint): the modules that
    declare them import their benchmark's own package (evalplus, bigcodebench, Math-Verify) only where they grade."""
    code = ("import sys; from fpa.grading import GRADERS; list(GRADERS)\n"
            "print(sorted(m for m in ('evalplus', 'bigcodebench', 'math_verify', 'torch') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_each_code_benchmarks_task_file_is_a_catalog_code_entry():
    from fpa.grading.code import code_bench, code_benches

    entries = read_benchmarks_config(CATALOG)[CODE_SECTION]
    assert [name for name in code_benches() if code_bench(name).task_file not in entries] == []


@pytest.fixture
def family(tmp_path, monkeypatch):
    """A package ``family_x`` whose modules ``a`` and ``b`` each declare a record named as given, beside a
    module ``helpers`` that declares none; ``plugin=`` adds a distribution ``plugin_x`` whose module
    ``plugin_x.things`` declares one more, named in the entry-point group ``family_x``."""

    def module_text(name: str) -> str:
        return f"import types\nTHINGS = (types.SimpleNamespace(name={name!r}),)\n"

    def make(a: str, b: str, plugin: str | None = None) -> Registry:
        package = tmp_path / "family_x"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "helpers.py").write_text("def things():\n    THINGS = ()\n    return THINGS\n")
        for module, name in (("a", a), ("b", b)):
            (package / f"{module}.py").write_text(module_text(name))
        if plugin is not None:
            (tmp_path / "plugin_x").mkdir()
            (tmp_path / "plugin_x" / "__init__.py").write_text("")
            (tmp_path / "plugin_x" / "things.py").write_text(module_text(plugin))
            info = tmp_path / "plugin_x-1.0.dist-info"
            info.mkdir()
            (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin_x\nVersion: 1.0\n")
            (info / "entry_points.txt").write_text("[family_x]\nextra = plugin_x.things\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        return Registry("thing", "family_x", "THINGS")

    yield make
    for module in [name for name in sys.modules if name.split(".")[0] in ("family_x", "plugin_x")]:
        del sys.modules[module]


def test_a_registry_finds_its_members_and_refuses_an_unknown_name(family):
    things = family("one", "two")
    assert list(things) == ["one", "two"] and things.module_of("two") == "family_x.b"
    assert things.member_modules() == ["family_x.a", "family_x.b"]  # helpers declares no THINGS at its top
    with pytest.raises(ValueError, match=r"^unknown thing 'three'; expected one of \['one', 'two'\]$"):
        things.lookup("three")


def test_a_registry_takes_the_members_of_another_package_from_its_entry_point_group(family):
    things = family("one", "two", plugin="three")
    assert list(things) == ["one", "two", "three"] and things.module_of("three") == "plugin_x.things"


def test_a_name_registered_by_two_modules_is_refused(family):
    things = family("one", "one")
    with pytest.raises(ValueError, match="^thing 'one': registered by family_x.a and by family_x.b$"):
        things.lookup("one")
