"""Where the project lives: the checkout that holds ``workflow/``, ``config/`` and ``src/``."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
