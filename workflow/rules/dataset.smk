# The offline dataset of each model: its own samples of the training problems, graded,
# or (dataset.source step_dpo) the Math-Step-DPO-10K pairs, no generation.
if config["dataset"]["source"] == "step_dpo":

    rule step_dpo_dataset:
        input:
            unpack(get_step_dpo_inputs),
        output:
            train="results/datasets/{model}/train.jsonl",
            val="results/datasets/{model}/val.jsonl",
        log:
            "logs/step_dpo_dataset/{model}.log",
        benchmark:
            "logs/benchmarks/step_dpo_dataset/{model}.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        threads: get_threads("build_dataset")
        resources:
            **get_resources("build_dataset"),
        params:
            dataset=get_step_dpo_config,
            model=get_model_option,
            code=get_code("fpa.cli.dataset"),
        shell:
            "python -m fpa step-dpo-dataset --pairs {input.pairs:q} {params.model} "
            "--config-json {params.dataset:q} --code {params.code} "
            "--out-train {output.train} --out-val {output.val} > {log} 2>&1"

else:

    rule sample_offline:
        input:
            model=get_base_model,
            problems="results/problems/train.jsonl",
        output:
            "results/datasets/{model}/samples.jsonl",
        log:
            "logs/sample_offline/{model}.log",
        benchmark:
            "logs/benchmarks/sample_offline/{model}.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            GENERATION_ENV
        threads: get_threads("sample_offline")
        resources:
            **get_resources("sample_offline"),
        params:
            dataset=get_dataset_config,
            code=get_code("fpa.cli.dataset"),
            work="results/datasets/{model}/work/samples",
            numerics=get_numerics(),
        shell:
            "{params.numerics}python -m fpa sample --model {input.model} --problems {input.problems} "
            "--config-json {params.dataset:q} --code {params.code} --threads {threads} --gpus {resources.gpu} "
            "--work {params.work} --out {output} > {log} 2>&1"

    rule build_dataset:
        input:
            samples="results/datasets/{model}/samples.jsonl",
        output:
            train="results/datasets/{model}/train.jsonl",
            val="results/datasets/{model}/val.jsonl",
        log:
            "logs/build_dataset/{model}.log",
        benchmark:
            "logs/benchmarks/build_dataset/{model}.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        # code rewards (taco_apps) grade in a thread pool over the CPUs the job may use
        threads: get_threads("build_dataset")
        resources:
            **get_resources("build_dataset"),
        params:
            dataset=get_dataset_config,
            code=get_code("fpa.cli.dataset"),
        shell:
            "python -m fpa build-dataset --samples {input.samples} "
            "--config-json {params.dataset:q} --code {params.code} "
            "--out-train {output.train} --out-val {output.val} > {log} 2>&1"


# The held-out validation problems as a benchmark (source: validation), per model: the
# paper selects lambda and (model_selection) each run's checkpoint on them.
rule validation_benchmark:
    input:
        unpack(get_validation_inputs),
    output:
        "results/benchmarks/validation/{model}.jsonl",
    log:
        "logs/validation_benchmark/{model}.log",
    benchmark:
        "logs/benchmarks/validation_benchmark/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    resources:
        **get_resources("light"),
    params:
        source=get_validation_source_option,
        code=get_code("fpa.cli.dataset"),
    shell:
        "python -m fpa validation-benchmark {params.source} --val {input.val} "
        "--code {params.code} --out {output} > {log} 2>&1"
