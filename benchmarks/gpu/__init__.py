"""The GPU benchmark (``run.py``): one device call for the paper's overhead table and the real-shape checks.

``markdown(record)`` renders its record for ``benchmarks/shared/report.py``.
"""

from gpu.tables import markdown  # noqa: F401
