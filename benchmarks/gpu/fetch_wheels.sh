#!/usr/bin/env bash
# The wheels benchmarks/gpu/run.py needs that the device image lacks (device KINDS.md's package list):
# TRL and datasets (the TRL comparison), with datasets' dill and multiprocess; jsonschema and its
# needs (fpa.config); the `dag` measurement's Snakemake with the dependencies the image lacks, and
# the two wheels the rehearsal's tokenizers are read from (tests/workflow/rehearsal_models.py). Python 3.12, x86-64 manylinux, into .whl/ of the repository root, which
# .git/info/exclude must ignore (echo /.whl/ >> .git/info/exclude). Versions: pyproject.toml's pins
# and what /work/venv resolved for them. Run from the repository root.
set -euo pipefail
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
  trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 \
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1 \
  snakemake==9.27.1 snakemake-interface-common==1.23.0 snakemake-interface-executor-plugins==9.4.0 \
  snakemake-interface-logger-plugins==2.1.0 snakemake-interface-report-plugins==1.3.0 \
  snakemake-interface-scheduler-plugins==2.0.2 snakemake-interface-storage-plugins==4.4.1 \
  argparse-dataclass==2.0.0 conda-inject==1.3.2 configargparse==1.9.0 docutils==0.22.4 \
  dpath==2.2.0 fastjsonschema==2.22.3 gitdb==4.0.12 gitpython==3.2.1 greenlet==3.5.6 humanfriendly==10.0 \
  immutables==0.21 jupyter-core==5.9.1 nbformat==5.11.1 platformdirs==4.14.8 pulp==3.3.2 pydantic==2.14.4 \
  pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 smart-open==7.7.1 smmap==5.0.3 \
  sqlalchemy==2.0.58 sqlmodel==0.0.37 tenacity==9.2.1 throttler==1.2.3 traitlets==5.16.1 yte==1.9.4 \
  dashscope==2.0.2 llama-models==0.3.0
# connection-pool (Snakemake's) is published as a source archive only: pure Python, pip builds it there
python3 -m pip download -q --no-deps --no-binary=:all: -d .whl connection-pool==0.0.3
ls -l .whl && du -sh .whl
