"""Hub model snapshots: fetched at a commit, each file checked against its pinned sha256.

A config's hub model names ``hub_id`` and ``revision``; ``fpa lock`` pins it by writing the
commit as ``revision`` and the sha256 of every file of the snapshot as ``files``, so the
same config always gets the same weights. ``fetch_snapshot`` fails naming the file, the
expected and the got sha256 (and revision) when a fetched file differs.

The model mirror (``data.model_mirror``) is a Hugging Face hub cache directory, as
``huggingface-cli download --cache-dir DIR`` fills it on a machine with network
(``models--<org>--<name>/refs/<branch>`` holds the commit, ``snapshots/<commit>/`` the
files): copy it to a cluster without network and fetch-model reads the snapshot there.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Mapping

from fpa.errors import ConfigError
from fpa.io import sha256_file
from fpa.paths import BUILT_MODEL_MIRROR

COMMIT = re.compile(r"[0-9a-f]{40}")
#: What huggingface_hub writes into a ``local_dir`` beside the files (download metadata).
LOCAL_DIR_METADATA = ".cache"


def is_pinned(model: dict) -> bool:
    """The model names a commit and the sha256 of its files (``fpa lock`` wrote them)."""
    return bool(COMMIT.fullmatch(str(model.get("revision", "")))) and bool(model.get("files"))


def snapshot_files(directory: str | os.PathLike) -> dict[str, str]:
    """sha256 of each file of a snapshot directory, by relative path (download metadata left out)."""
    root = Path(directory)
    return {path.relative_to(root).as_posix(): sha256_file(path)
            for path in sorted(root.rglob("*"))
            if path.is_file() and path.relative_to(root).parts[0] != LOCAL_DIR_METADATA}


def mirror_snapshot(hub_id: str, revision: str, mirror: str | os.PathLike) -> tuple[str, Path]:
    """(commit, snapshot directory) of ``hub_id`` at ``revision`` in the model mirror (a hub cache)."""
    from huggingface_hub import snapshot_download

    try:
        path = Path(snapshot_download(hub_id, revision=revision, cache_dir=mirror, local_files_only=True))
    except Exception as error:  # huggingface_hub's several not-found errors
        raise ValueError(f"{hub_id}@{revision}: not in the model mirror {mirror} ({type(error).__name__})") from None
    return path.name, path


def hub_pins(hub_id: str, revision: str) -> tuple[str, dict[str, str]]:
    """(commit, sha256 by file) of ``hub_id`` at ``revision`` from the hub (needs network), without
    downloading the weights: LFS files' sha256 come from the hub's metadata, the small files
    (config, tokenizer) are downloaded and hashed."""
    from huggingface_hub import HfApi, hf_hub_download

    info = HfApi().model_info(hub_id, revision=revision, files_metadata=True)
    return info.sha, {
        sibling.rfilename: sibling.lfs.sha256 if sibling.lfs is not None
        else sha256_file(hf_hub_download(hub_id, sibling.rfilename, revision=info.sha))
        for sibling in sorted(info.siblings, key=lambda sibling: sibling.rfilename)
    }


def model_pins(model: dict, mirror: str | os.PathLike | None) -> tuple[str, dict[str, str]]:
    """(commit, sha256 by file) of a config's hub model: from the mirror, else from the hub."""
    if mirror is None:
        return hub_pins(model["hub_id"], model["revision"])
    commit, path = mirror_snapshot(model["hub_id"], model["revision"], mirror)
    return commit, snapshot_files(path)


def check_files(where: str, revision: str, expected: dict[str, str], got: dict[str, str]) -> None:
    """Every pinned file present with its sha256, and no file the pin does not name."""
    for name in sorted(set(expected) | set(got)):
        if expected.get(name) != got.get(name):
            raise ValueError(f"{where}: {name}: sha256 mismatch at revision {revision}: expected "
                             f"{expected.get(name, '(no such file pinned)')}, got {got.get(name, '(file missing)')}")


def check_model(where: str, model: dict, commit: str, files: dict[str, str]) -> None:
    """A fetched snapshot against the pins of ``model`` (only those it has)."""
    if COMMIT.fullmatch(str(model.get("revision", ""))) and commit != model["revision"]:
        raise ValueError(f"{where}: revision mismatch: expected {model['revision']}, got {commit}")
    if model.get("files"):
        check_files(where, commit, model["files"], files)


def model_mirror(config: Mapping, where: str = "config") -> str | None:
    """Where the config's hub models come from: the mirror rule build_models writes (``data.build_models``),
    else ``data.model_mirror`` (None: the hub); ``ConfigError`` naming ``where`` where both are set."""
    data = config["data"]
    if data["build_models"] and data["model_mirror"] is not None:
        raise ConfigError(f"{where}: data.model_mirror: the models are built into {BUILT_MODEL_MIRROR} "
                          f"(data.build_models: true); expected no model_mirror, got {data['model_mirror']!r}")
    return BUILT_MODEL_MIRROR if data["build_models"] else data["model_mirror"]


def fetch_snapshot(model: dict, dest: Path, mirror: str | os.PathLike | None, where: str) -> dict:
    """Write the snapshot of ``model`` into ``dest`` (a fresh directory) and check it against its
    pins; returns ``{"revision": commit, "files": {name: sha256}}`` for the provenance record."""
    if mirror is not None:
        commit, source = mirror_snapshot(model["hub_id"], model["revision"], mirror)
        shutil.copytree(source, dest, dirs_exist_ok=True)  # the cache's symlinks to blobs become files
    else:
        from huggingface_hub import HfApi, snapshot_download

        commit = HfApi().model_info(model["hub_id"], revision=model["revision"]).sha
        snapshot_download(model["hub_id"], revision=commit, local_dir=dest)
    files = snapshot_files(dest)
    check_model(where, model, commit, files)
    return {"revision": commit, "files": files}
