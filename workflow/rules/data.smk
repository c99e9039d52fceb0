# Benchmark and training files: from the configured mirror, else from the canonical
# URL, always checked against the sha256 pinned in the catalog (config/benchmarks.yaml).
rule fetch_data:
    output:
        "resources/data/{path}",
    log:
        "logs/fetch_data/{path}.log",
    benchmark:
        "logs/benchmarks/fetch_data/{path}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/tables.yaml"
    resources:
        **get_resources("fetch"),
    params:
        entry=get_catalog_entry_json,
        mirror=get_mirror_option(),
        code=get_code("fpa.cli.data"),
    shell:
        "python -m fpa fetch-data --entry-json {params.entry:q} {params.mirror} --code {params.code} "
        "--out {output:q} > {log:q} 2>&1"


rule prepare_benchmark:
    input:
        unpack(get_benchmark_parts),
    output:
        "results/benchmarks/catalog/{bench}.jsonl",
    log:
        "logs/prepare_benchmark/{bench}.log",
    benchmark:
        "logs/benchmarks/prepare_benchmark/{bench}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/tables.yaml"
    resources:
        **get_resources("light"),
    params:
        bench=get_benchmark_config,
        catalog=get_catalog_path(),
        code=get_code("fpa.cli.data"),
    shell:
        "python -m fpa prepare-benchmark --name {wildcards.bench} --config-json {params.bench:q} "
        "--catalog {params.catalog:q} --code {params.code} --out {output} {input:q} > {log} 2>&1"


# A `source: file` benchmark (a user's own JSONL) is checked by a job of its own: evaluation
# reads the validated records, so it never samples a benchmark that cannot be graded.
rule validate_benchmark:
    input:
        get_user_benchmark,
    output:
        "results/benchmarks/file/{bench}.jsonl",
    log:
        "logs/validate_benchmark/{bench}.log",
    benchmark:
        "logs/benchmarks/validate_benchmark/{bench}.tsv"
    priority: Priority.INPUT_CHECKS
    conda:
        "../../envs/tables.yaml"
    resources:
        **get_resources("light"),
    params:
        bench=get_benchmark_config,
        code=get_validate_code,
    shell:
        "python -m fpa validate-benchmark --name {wildcards.bench} --config-json {params.bench:q} "
        "--code {params.code} --out {output:q} {input:q} > {log:q} 2>&1"


if config["dataset"]["source"] == "math12k":

    rule math_train_problems:
        input:
            unpack(get_math12k_files),
        output:
            "results/problems/train.jsonl",
        log:
            "logs/math_train_problems/train.log",
        benchmark:
            "logs/benchmarks/math_train_problems/train.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/tables.yaml"
        resources:
            **get_resources("light"),
        params:
            sample="--sample" if CATALOG.get("sample") else "",
            code=get_code("fpa.cli.data"),
        shell:
            "python -m fpa math-train --math-train {input.math_train:q} --math-test {input.math_test:q} "
            "--math500 {input.math500:q} --math-perturb {input.math_perturb_simple:q} "
            "{input.math_perturb_hard:q} {params.sample} --code {params.code} --out {output} > {log} 2>&1"


rule fetch_model:
    output:
        directory("resources/models/{model}"),
    log:
        "logs/fetch_model/{model}.log",
    benchmark:
        "logs/benchmarks/fetch_model/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    resources:
        **get_resources("fetch"),
    params:
        model=get_model_config,
        model_mirror=config["data"]["model_mirror"] or "",
        code=get_code("fpa.cli.data", "fpa.data.models"),
    shell:
        "python -m fpa fetch-model --config-json {params.model:q} --model-mirror {params.model_mirror:q} "
        "--code {params.code} --out {output} > {log} 2>&1"
