#!/usr/bin/env bash
# The wheels benchmarks/gpu/run.py needs that the device image lacks (device KINDS.md's package list):
# TRL and datasets (the TRL comparison), with datasets' dill and multiprocess; jsonschema and its
# needs (fpa.config). Python 3.12, x86-64 manylinux, into .whl/ of the repository root, which
# .git/info/exclude must ignore (echo /.whl/ >> .git/info/exclude). Versions: pyproject.toml's pins
# and what /work/venv resolved for them. Run from the repository root.
set -euo pipefail
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
  trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 \
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
ls -l .whl && du -sh .whl
