rule toy_base_model:
    output:
        directory("results/models/{model}/base"),
    log:
        "logs/toy_base_model/{model}.log",
    benchmark:
        "logs/benchmarks/toy_base_model/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    threads: get_threads("toy_base_model")
    resources:
        **get_resources("toy_base_model"),
    params:
        model=get_model_config,
        code=get_code("fpa.cli.toy"),
        numerics=get_numerics(),
    shell:
        "{params.numerics}python -m fpa toy-model --config-json {params.model:q} --code {params.code} "
        "--threads {threads} --out {output} > {log} 2>&1"


if config["dataset"]["source"] == "toy":

    rule toy_train_problems:
        output:
            "results/problems/train.jsonl",
        log:
            "logs/toy_train_problems/train.log",
        benchmark:
            "logs/benchmarks/toy_train_problems/train.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        resources:
            **get_resources("light"),
        params:
            problems=get_toy_train_problems_config(),
            seed=config["dataset"]["seed"],
            code=get_code("fpa.cli.toy"),
        shell:
            "python -m fpa toy-problems --split train --config-json {params.problems:q} "
            "--seed {params.seed} --code {params.code} --out {output} > {log} 2>&1"


rule toy_benchmark:
    output:
        "results/benchmarks/toy/{bench}.jsonl",
    log:
        "logs/toy_benchmark/{bench}.log",
    benchmark:
        "logs/benchmarks/toy_benchmark/{bench}.tsv"
    priority: Priority.AFTER_TRAINING
    conda:
        "../../envs/train.yaml"
    resources:
        **get_resources("light"),
    params:
        bench=get_benchmark_config,
        seed=config["dataset"]["seed"],
        code=get_code("fpa.cli.toy"),
    shell:
        "python -m fpa toy-problems --split test --name {wildcards.bench} --config-json {params.bench:q} "
        "--seed {params.seed} --code {params.code} --out {output} > {log} 2>&1"
