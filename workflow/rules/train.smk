rule train:
    input:
        unpack(get_train_inputs),
    output:
        checkpoint=directory("results/train/{model}/{method}/{seed}/checkpoint"),
        snapshots=directory("results/train/{model}/{method}/{seed}/snapshots"),
    log:
        "logs/train/{model}/{method}/{seed}.log",
    benchmark:
        "logs/benchmarks/train/{model}/{method}/{seed}.tsv"
    wildcard_constraints:
        method=get_run_pattern(online=False),
    priority: Priority.TRAINING
    conda:
        "../../envs/train.yaml"
    threads: get_threads("train")
    resources:
        **get_resources("train"),
    params:
        numerics=get_numerics(),
        run=get_run_json,
        code=get_train_code,
        work="results/train/{model}/{method}/{seed}/work",
        reference=get_reference_option,
        processes=get_processes("train"),
    shell:
        "{params.numerics}python -m fpa train --model {input.model} --train {input.train} --val {input.val} "
        "{params.reference} --run-json {params.run:q} --method {wildcards.method} "
        "--seed {wildcards.seed} --code {params.code} --processes {params.processes} --threads {threads} "
        "--nodes {resources.nodes} --work {params.work} --out {output.checkpoint} --snapshots {output.snapshots} "
        "> {log} 2>&1"


# Online methods (GRPO, DAPO): TRL's GRPOTrainer samples from the policy as it trains, rewarded
# by the dataset's grader; the same outputs as rule train, so evaluation and curves are shared.
if ONLINE_RUNS:

    rule train_online:
        input:
            unpack(get_online_inputs),
        output:
            checkpoint=directory("results/train/{model}/{method}/{seed}/checkpoint"),
            snapshots=directory("results/train/{model}/{method}/{seed}/snapshots"),
        log:
            "logs/train_online/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/train_online/{model}/{method}/{seed}.tsv"
        wildcard_constraints:
            method=get_run_pattern(online=True),
        priority: Priority.TRAINING
        conda:
            GENERATION_ENV
        threads: get_threads("train")
        resources:
            **get_resources("train"),
        params:
            numerics=get_numerics(),
            run=get_run_json,
            sampling=get_online_config,
            grader=get_dataset_grader(),
            code=get_online_code,
            work="results/train/{model}/{method}/{seed}/work",
            processes=get_processes("train"),
        shell:
            "{params.numerics}python -m fpa train-online --model {input.model} --problems {input.problems} "
            "--exclude {input.exclude} --run-json {params.run:q} --config-json {params.sampling:q} "
            "--grader {params.grader} --method {wildcards.method} --seed {wildcards.seed} --code {params.code} "
            "--processes {params.processes} --threads {threads} --work {params.work} "
            "--out {output.checkpoint} --snapshots {output.snapshots} > {log} 2>&1"
