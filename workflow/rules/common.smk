# The judged config and its plan (fpa.planning.Plan): the rules of each file call their stage of
# it (PLAN.data, PLAN.train, ... for data.smk, train.smk, ...) and name their files by the path
# templates of fpa.paths.
import sys
from pathlib import Path

from fpa import paths
from fpa.containment import RELATIVE_PATH
from fpa.errors import ConfigError
from fpa.memory.summary import cost_lines
from fpa.memory.plan import memory_warnings
from fpa.planning import NAME, judge
from fpa.planning.priority import Priority
from fpa.planning.shell import shell_prefix
from fpa.planning.tables import COST_TABLE, REPRODUCTION_TABLE
from fpa.provenance.fingerprint import code_fingerprint
from fpa.resources import GPU_PARTITION, resource_text

# Jobs (also inside --use-conda environments) import the package from this checkout.
shell.prefix(shell_prefix(workflow.basedir))

# A --configfile is a whole experiment: it replaces the default toy config rather than being
# merged into it (Snakemake merges nested keys, which would add the toy model, benchmarks and
# table to the paper's grid). The default is relative to the working directory, as `configfile:`'s.
CONFIG_FILES = workflow.configfiles or ["config/config.yaml"]
# The one judge of fpa check-config (fpa.planning.judge) reads the config files with its own
# limits (Snakemake's loader names no line of a syntax error; there is no `configfile:`, which
# would read the default a second time, with none), and the rules get the config it judged; the
# plan sends the jobs that compute on a GPU to the SLURM profile's gpu_partition (the others take
# its slurm_partition).
try:
    PLAN = judge(
        CONFIG_FILES,
        workflow.basedir,
        workflow.config_settings.config,
        resource_text(workflow.resource_settings.default_resources, GPU_PARTITION),
    )
except ConfigError as error:
    sys.exit(f"config error: {error}")
# as `configfile:` records them (the report, the source archive)
workflow.configfiles[:] = CONFIG_FILES
config.clear()
config.update(PLAN.config)
# before any GPU job waits in a queue: the ones whose estimate exceeds gpu_memory_gb, and what the
# plan costs (disk, GPU-hours, inputs not pinned), with a warning where its disk exceeds a bound
if workflow.is_main_process:
    for line in memory_warnings(config, PLAN.runs, Path.cwd()) + cost_lines(
        config, PLAN.runs, PLAN.catalog, Path.cwd(), curves=PLAN.curves()
    ):
        print(line, file=sys.stderr)


wildcard_constraints:
    model=NAME,
    method=NAME,
    seed=r"\d+",
    bench=NAME,
    table=NAME,
    experiment=NAME,
    figure=NAME,
    path=RELATIVE_PATH,


# The env of the rules that generate (sampling, evaluation, curves, and the online runs, whose TRL
# trainer generates with vLLM, use_vllm): vLLM's GPU build and the training stack in one
# (envs/vllm-gpu.yaml) where generation.backend is vllm, else the training env.
GENERATION_ENV = "../../envs/" + (
    "vllm-gpu.yaml" if config["generation"]["backend"] == "vllm" else "train.yaml"
)
