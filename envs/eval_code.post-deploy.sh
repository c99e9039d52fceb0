#!/usr/bin/env bash
# The peers' graders without their pinned dependency trees (pip requirement files cannot
# say --no-deps per line); see docs/code_eval.md.
set -euo pipefail
pip install --no-deps evalplus==0.3.1 bigcodebench==0.2.5
