# fpa-bench: the paper's DAG, from base model to tables. See README.md.
import gc
import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

# Planning runs on every call, and the garbage collector's full passes re-scanned every object
# Snakemake had imported, none of which is garbage before it exits: they are moved out of the
# collector's reach (benchmarks/planning/README.md).
gc.freeze()

# Plan with the package of this checkout (as jobs run it), not whichever `fpa` is installed.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from fpa.provenance.record import remove_leftovers
from fpa.resources import local_rules


report: "workflow/report/workflow.rst"


onstart:
    remove_leftovers("results", "resources")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/toy.smk"
include: "workflow/rules/dataset.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/code.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/figures.smk"


# Run where snakemake runs, never queued: this rule and the groups of fpa.resources.LOCAL_GROUPS.
rule all:
    default_target: True
    input:
        PLAN.final_output(),
    localrule: True


workflow.localrules(*local_rules(workflow.rules))
