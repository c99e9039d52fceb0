# The offline dataset of each model: its own samples of the training problems, graded,
# or (dataset.source step_dpo) the Math-Step-DPO-10K pairs, no generation.
if config["dataset"]["source"] == "step_dpo":

    rule step_dpo_dataset:
        input:
            unpack(PLAN.dataset.step_dpo_inputs),
        output:
            train=paths.TRAIN_SPLIT,
            val=paths.VAL_SPLIT,
        log:
            "logs/step_dpo_dataset/{model}.log",
        benchmark:
            "logs/benchmarks/step_dpo_dataset/{model}.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        threads: PLAN.threads("build_dataset")
        resources:
            **PLAN.resources("build_dataset"),
        params:
            dataset=PLAN.dataset.step_dpo_config,
            model=PLAN.dataset.model_option,
            code=code_fingerprint("fpa.cli.dataset"),
        shell:
            "python -m fpa step-dpo-dataset --pairs {input.pairs:q} {params.model} "
            "--config-json {params.dataset:q} --code {params.code} "
            "--out-train {output.train} --out-val {output.val} > {log} 2>&1"

else:

    # A hub model's training prompts against every max_length that will encode them, before it samples.
    # Sampling takes the check as a plain input, so a changed max_length re-runs sampling too: marked
    # ancient, a check that re-runs would hide the rerun reasons of every job below it (Snakemake 9,
    # snakemake#4166): sampling on newer problems, training on a changed max_length.
    rule check_prompt_budget:
        input:
            model=PLAN.base_model,
            problems=paths.TRAIN_PROBLEMS,
        output:
            paths.PROMPT_BUDGET,
        log:
            "logs/check_prompt_budget/{model}.log",
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        resources:
            **PLAN.resources("light"),
        params:
            budget=PLAN.dataset.prompt_budget_config,
            code=code_fingerprint("fpa.cli.dataset"),
        shell:
            "python -m fpa check-prompt-budget --model {input.model} --problems {input.problems} "
            "--config-json {params.budget:q} --code {params.code} --out {output} > {log} 2>&1"

    rule sample_offline:
        input:
            model=PLAN.base_model,
            problems=paths.TRAIN_PROBLEMS,
            budget=PLAN.dataset.prompt_budget,
        output:
            paths.SAMPLES,
        log:
            "logs/sample_offline/{model}.log",
        benchmark:
            "logs/benchmarks/sample_offline/{model}.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            GENERATION_ENV
        threads: PLAN.threads("sample_offline")
        resources:
            **PLAN.resources("sample_offline"),
        params:
            dataset=PLAN.dataset.config_json,
            code=code_fingerprint("fpa.cli.dataset"),
            work=paths.SAMPLES_WORK,
            numerics=PLAN.numerics(),
        shell:
            "{params.numerics}python -m fpa sample --model {input.model} --problems {input.problems} "
            "--config-json {params.dataset:q} --code {params.code} --threads {threads} --gpus {resources.gpu} "
            "--work {params.work} --out {output} > {log} 2>&1"

    rule build_dataset:
        input:
            samples=paths.SAMPLES,
        output:
            train=paths.TRAIN_SPLIT,
            val=paths.VAL_SPLIT,
        log:
            "logs/build_dataset/{model}.log",
        benchmark:
            "logs/benchmarks/build_dataset/{model}.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        # code rewards (taco_apps) grade in a thread pool over the CPUs the job may use
        threads: PLAN.threads("build_dataset")
        resources:
            **PLAN.resources("build_dataset"),
        params:
            dataset=PLAN.dataset.config_json,
            code=code_fingerprint("fpa.cli.dataset"),
        shell:
            "python -m fpa build-dataset --samples {input.samples} "
            "--config-json {params.dataset:q} --code {params.code} "
            "--out-train {output.train} --out-val {output.val} > {log} 2>&1"


# The held-out validation problems as a benchmark (source: validation), per model: the
# paper selects lambda and (model_selection) each run's checkpoint on them.
rule validation_benchmark:
    input:
        unpack(PLAN.dataset.validation_inputs),
    output:
        paths.VALIDATION_BENCHMARK,
    log:
        "logs/validation_benchmark/{model}.log",
    benchmark:
        "logs/benchmarks/validation_benchmark/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        source=PLAN.dataset.validation_source_option,
        code=code_fingerprint("fpa.cli.dataset"),
    shell:
        "python -m fpa validation-benchmark {params.source} --val {input.val} "
        "--code {params.code} --out {output} > {log} 2>&1"
