# What the rules ask of the config, computed once by fpa.planning.Plan; the get_* names the
# rules use are its methods.
import sys
from pathlib import Path

from fpa.containment import RELATIVE_PATH
from fpa.errors import ConfigError
from fpa.memory.cost import disk_warning
from fpa.memory.plan import memory_warnings
from fpa.planning import NAME, judge
from fpa.planning.plan import COST_TABLE, REPRODUCTION_TABLE
from fpa.planning.priority import Priority
from fpa.planning.shell import shell_prefix
from fpa.provenance.fingerprint import code_fingerprint

# Jobs (also inside --use-conda environments) import the package from this checkout.
shell.prefix(shell_prefix(workflow.basedir))

# A --configfile is a whole experiment: it replaces the default toy config rather than being
# merged into it (Snakemake merges nested keys, which would add the toy model, benchmarks and
# table to the paper's grid). The default is relative to the working directory, as `configfile:`'s.
CONFIG_FILES = workflow.configfiles or ["config/config.yaml"]
# The one judge of fpa check-config (fpa.planning.judge) reads the config files with its own
# limits (Snakemake's loader names no line of a syntax error; there is no `configfile:`, which
# would read the default a second time, with none), and the rules get the config it judged.
try:
    PLAN = judge(CONFIG_FILES, workflow.basedir, workflow.config_settings.config)
except ConfigError as error:
    sys.exit(f"config error: {error}")
# as `configfile:` records them (the report, the source archive)
workflow.configfiles[:] = CONFIG_FILES
config.clear()
config.update(PLAN.config)
# before any GPU job waits in a queue: the ones whose estimate exceeds gpu_memory_gb
if workflow.is_main_process:
    for line in memory_warnings(config, PLAN.runs, Path.cwd()):
        print(line, file=sys.stderr)
    if (
        line := disk_warning(config, PLAN.runs, Path.cwd(), curves=PLAN.curves())
    ) is not None:
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


CATALOG = PLAN.catalog
CODE_BENCHES = PLAN.code_benches
EVAL_BENCHES = PLAN.eval_benches
ONLINE_RUNS = PLAN.online_runs
# The env of the rules that generate (sampling, evaluation, curves, and the online runs, whose TRL
# trainer generates with vLLM, use_vllm): vLLM's GPU build and the training stack in one
# (envs/vllm-gpu.yaml) where generation.backend is vllm, else the training env.
GENERATION_ENV = "../../envs/" + (
    "vllm-gpu.yaml" if config["generation"]["backend"] == "vllm" else "train.yaml"
)

get_code = code_fingerprint
get_final_output = PLAN.final_output
get_resources = PLAN.resources
get_device = PLAN.device
get_reference_weights_dtype = PLAN.reference_weights_dtype
get_reference_dtype = PLAN.reference_dtype
get_threads = PLAN.threads
get_processes = PLAN.processes
get_numerics = PLAN.numerics

# data, datasets, training
get_catalog_entry_json = PLAN.catalog_entry_json
get_catalog_path = PLAN.catalog_path
get_mirror_option = PLAN.mirror_option
get_benchmark_parts = PLAN.benchmark_parts
get_benchmark_config = PLAN.benchmark_config
get_math12k_files = PLAN.math12k_files
get_code_train_files = PLAN.code_train_files
get_model_config = PLAN.model_config
get_toy_train_problems_config = PLAN.toy_train_problems_config
get_base_model = PLAN.base_model
get_dataset_config = PLAN.dataset_config
get_step_dpo_inputs = PLAN.step_dpo_inputs
get_validation_inputs = PLAN.validation_inputs
get_validation_source_option = PLAN.validation_source_option
get_step_dpo_config = PLAN.step_dpo_config
get_model_option = PLAN.model_option
get_train_inputs = PLAN.train_inputs
get_reference_option = PLAN.reference_option
get_run_json = PLAN.run_json
get_train_code = PLAN.train_code
get_run_pattern = PLAN.run_pattern
get_online_inputs = PLAN.online_inputs
get_online_config = PLAN.online_config
get_online_code = PLAN.online_code
get_dataset_grader = PLAN.dataset_grader

# evaluation, curves, model selection, analyses
graders_code = PLAN.graders_code
get_checkpoint = PLAN.checkpoint
get_benchmark_file = PLAN.bench_records
get_user_benchmark = PLAN.user_benchmark
get_eval_records = PLAN.eval_records
get_evaluate_config = PLAN.evaluate_config
get_sampling_args = PLAN.sampling_args
get_eval_config = PLAN.eval_config
get_generate_code_config = PLAN.generate_code_config
get_code_records = PLAN.code_records
get_code_bench_pattern = PLAN.code_bench_pattern
get_code_tasks = PLAN.code_tasks
get_code_eval_code = PLAN.code_eval_code
get_validate_code = PLAN.validate_code
get_curve_snapshots = PLAN.curve_snapshots
get_curve_records = PLAN.curve_records
get_curve_args = PLAN.curve_args
get_curve_config = PLAN.curve_config
get_selection_records = PLAN.selection_records
get_selection_config = PLAN.selection_config
get_future_policy_bench = PLAN.future_policy_bench
get_future_policy_records = PLAN.future_policy_records
get_future_policy_config = PLAN.future_policy_config
get_entanglement_config = PLAN.entanglement_config
get_entanglement_pair_files = PLAN.entanglement_pair_files
get_entanglement_pairs_json = PLAN.entanglement_pairs_json

# tables, figures, cost
get_table_pattern = PLAN.table_pattern
get_table_evals = PLAN.table_evals
get_table_caption = PLAN.table_caption
get_compared_tables = PLAN.compared_tables
get_table_config = PLAN.table_config
get_table_figure_pattern = PLAN.table_figure_pattern
get_figure_inputs = PLAN.figure_inputs
get_figure_config = PLAN.figure_config
get_figure_caption = PLAN.figure_caption
get_figure_code = PLAN.figure_code
get_cost_inputs = PLAN.cost_inputs
get_cost_config = PLAN.cost_config
