"""``fpa lock``: pin every hub model and data file a config fetches, the way lock files work.

The first ``fpa lock CONFIG`` resolves each unpinned input and writes its pin back into the
file that names it: a hub model's commit (``revision``) and the sha256 of each of its files
(``files``) into the config's model entry; a catalog file's ``sha256`` (and, fetched from
the hub, the dataset's commit as ``revision`` and in its ``url``) into the catalog. Inputs
already pinned are verified against what the source holds now. ``--check`` writes nothing
and fails on any input that is unpinned or differs, so an unpinned fetch is visible before
a job runs. Sources: the model mirror (``data.model_mirror``) and data mirror
(``data.mirror``) where the config sets them, else the hub (network).

Files named only by a URL at a GitHub commit with a pinned sha256 need no lock: with no
mirror to compare them to, they are left as they are (fetch-data checks them).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Iterator

from fpa.catalog import ALL_SECTIONS
from fpa.data.dataset_files import DATASET_FILES
from fpa.data.download import fetch
from fpa.data.models import COMMIT, check_model, is_pinned, model_mirror, model_pins
from fpa.data.yaml_edit import set_entry_keys
from fpa.io import sha256_file, write_text
from fpa.project import PROJECT_ROOT


def catalog_path(config: dict) -> Path:
    """The catalog file as the workflow finds it (relative paths: cwd, else the project)."""
    path = Path(config["data"]["catalog"])
    return path if path.is_absolute() or path.is_file() else PROJECT_ROOT / path


def fetched_entries(config: dict, catalog: dict) -> Iterator[tuple[str, str, dict]]:
    """(section, name, entry) of each catalog file the config fetches, once each."""
    wanted = [(section, part) for bench in config["benchmarks"].values() if bench["source"] == "catalog"
              for part in bench["parts"] for section in ALL_SECTIONS if part in catalog.get(section, {})]
    wanted += list(DATASET_FILES.get(config["dataset"]["source"], ()))
    for section, name in dict.fromkeys(wanted):
        entry = catalog[section][name]
        if "missing" not in entry:
            yield section, name, entry


def unpinned_inputs(config: dict, catalog: dict) -> list[str]:
    """The keys of the config's hub models and fetched catalog files that are not pinned (a model's
    revision and files, a file's sha256): what ``fpa lock`` pins and ``fpa lock --check`` refuses."""
    models = [f"models.{name}" for name, model in config["models"].items()
              if model["source"] == "hub" and not is_pinned(model)]
    files = [f"{section}.{name}" for section, name, entry in fetched_entries(config, catalog)
             if entry["sha256"] is None]
    return models + files


def lock_models(config: dict, text: str, where: str, check: bool) -> tuple[str, list[str], list[str]]:
    """(config text with the models pinned, report lines, problems)."""
    lines, problems = [], []
    for name, model in config["models"].items():
        if model["source"] != "hub":
            continue
        key = f"models.{name}"
        if check and not is_pinned(model):
            problems.append(f"{where}: {key}: {model['hub_id']} not pinned (revision {model['revision']!r}"
                            f"{', no files' if not model.get('files') else ''}); run `fpa lock {where}`")
            continue
        try:
            commit, files = model_pins(model, model_mirror(config, where))
            check_model(f"model {model['hub_id']}", model, commit, files)
        except ValueError as error:  # reported with every other input's problem
            problems.append(f"{where}: {key}: {error}")
            continue
        if is_pinned(model):
            lines.append(f"{key}: {model['hub_id']} verified at {commit} ({len(files)} files)")
        else:
            text = set_entry_keys(text, where, "models", name, {"revision": commit, "files": files})
            lines.append(f"{key}: {model['hub_id']} pinned at {commit} ({len(files)} files)")
    return text, lines, problems


def lock_catalog(config: dict, catalog: dict, text: str, where: str,
                 check: bool) -> tuple[str, list[str], list[str]]:
    """(catalog text with its hub files pinned, report lines, problems)."""
    lines, problems = [], []
    mirror = config["data"]["mirror"]
    for section, name, entry in fetched_entries(config, catalog):
        key = f"{section}.{name}"
        in_mirror = mirror is not None and (Path(mirror) / entry["path"]).is_file()
        if entry["sha256"] is None and check:
            problems.append(f"{where}: {key}: hub file {entry['hub']}/{Path(entry['url']).name} not pinned "
                            f"(sha256: null); run `fpa lock`")
            continue
        if entry["sha256"] is not None and not in_mirror:
            continue  # nothing here to compare it with; fetch-data checks it
        pins = _mirror_pins(entry, mirror) if in_mirror else _hub_pins(entry)
        if entry["sha256"] is None:
            text = set_entry_keys(text, where, section, name, pins)
            lines.append(f"{key}: pinned sha256 {pins['sha256']}" + (
                f" at revision {pins['revision']}" if "revision" in pins
                else f" from the mirror {mirror} (revision not resolved: the sha256 pins the file)"))
        elif pins["sha256"] != entry["sha256"]:
            problems.append(f"{where}: {key}: {Path(mirror) / entry['path']}: sha256 mismatch: expected "
                            f"{entry['sha256']}, got {pins['sha256']}")
        else:
            lines.append(f"{key}: verified sha256 {entry['sha256']} ({Path(mirror) / entry['path']})")
    return text, lines, problems


def _mirror_pins(entry: dict, mirror: str) -> dict:
    return {"sha256": sha256_file(Path(mirror) / entry["path"])}


def _hub_pins(entry: dict) -> dict:
    """The dataset's commit (in ``revision`` and the url) and the fetched file's sha256 (network)."""
    from huggingface_hub import HfApi

    revision = entry.get("revision") or re.search(r"/resolve/([^/]+)/", entry["url"]).group(1)
    commit = revision if COMMIT.fullmatch(revision) else HfApi().dataset_info(entry["hub"], revision=revision).sha
    url = entry["url"].replace(f"/resolve/{revision}/", f"/resolve/{commit}/")
    with tempfile.TemporaryDirectory() as scratch:
        fetched = fetch({**entry, "url": url, "sha256": None}, Path(scratch) / Path(entry["path"]).name)
        return {"sha256": sha256_file(fetched), "revision": commit, "url": url}


def lock(config_path: str | Path, config: dict, catalog: dict, check: bool) -> list[str]:
    """Pin (or, with ``check``, verify) every hub input of the config; the report lines.

    Raises ``ValueError`` with one line per problem (unpinned under ``check``, or different)."""
    config_path, catalog_file = Path(config_path), catalog_path(config)
    config_text, model_lines, model_problems = lock_models(config, config_path.read_text(), str(config_path), check)
    catalog_text, data_lines, data_problems = lock_catalog(config, catalog, catalog_file.read_text(),
                                                           str(catalog_file), check)
    problems = model_problems + data_problems
    if problems:
        raise ValueError("\n".join(problems))
    if not check:
        if config_text != config_path.read_text():
            write_text(config_path, config_text)
        if catalog_text != catalog_file.read_text():
            write_text(catalog_file, catalog_text)
    return model_lines + data_lines
