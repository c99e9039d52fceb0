"""The data mirror: $FPA_DATA_MIRROR, else ``shared/data`` beside the repository."""

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = Path(os.environ.get("FPA_DATA_MIRROR", REPO_ROOT.parent / "shared" / "data"))
    if not (path / "MANIFEST.md").is_file():
        pytest.skip(f"data mirror not found at {path} (set FPA_DATA_MIRROR)")
    return path


@pytest.fixture(scope="session")
def tiny(mirror: Path) -> Path:
    return mirror / "tiny"
