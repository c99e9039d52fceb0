rule toy_base_model:
    output:
        directory(paths.TOY_MODEL),
    log:
        "logs/toy_base_model/{model}.log",
    benchmark:
        "logs/benchmarks/toy_base_model/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    threads: PLAN.threads("toy_base_model")
    resources:
        **PLAN.resources("toy_base_model"),
    params:
        model=PLAN.model_config,
        code=code_fingerprint("fpa.cli.toy"),
        numerics=PLAN.numerics(),
    shell:
        "{params.numerics}python -m fpa toy-model --config-json {params.model:q} --code {params.code} "
        "--threads {threads} --out {output} > {log} 2>&1"


if config["dataset"]["source"] == "toy":

    rule toy_train_problems:
        output:
            paths.TRAIN_PROBLEMS,
        log:
            "logs/toy_train_problems/train.log",
        benchmark:
            "logs/benchmarks/toy_train_problems/train.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/train.yaml"
        resources:
            **PLAN.resources("light"),
        params:
            problems=PLAN.toy.problems_config(),
            seed=config["dataset"]["seed"],
            code=code_fingerprint("fpa.cli.toy"),
        shell:
            "python -m fpa toy-problems --split train --config-json {params.problems:q} "
            "--seed {params.seed} --code {params.code} --out {output} > {log} 2>&1"


rule toy_benchmark:
    output:
        paths.BENCHMARK["toy"],
    log:
        "logs/toy_benchmark/{bench}.log",
    benchmark:
        "logs/benchmarks/toy_benchmark/{bench}.tsv"
    priority: Priority.AFTER_TRAINING
    conda:
        "../../envs/train.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        bench=PLAN.benchmark_config,
        seed=config["dataset"]["seed"],
        code=code_fingerprint("fpa.cli.toy"),
    shell:
        "python -m fpa toy-problems --split test --name {wildcards.bench} --config-json {params.bench:q} "
        "--seed {params.seed} --code {params.code} --out {output} > {log} 2>&1"
