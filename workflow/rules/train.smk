rule train:
    input:
        unpack(PLAN.train.inputs),
    output:
        checkpoint=directory(paths.CHECKPOINT),
        snapshots=directory(paths.SNAPSHOTS),
    log:
        "logs/train/{model}/{method}/{seed}.log",
    benchmark:
        "logs/benchmarks/train/{model}/{method}/{seed}.tsv"
    wildcard_constraints:
        method=PLAN.train.run_pattern(online=False),
    priority: Priority.TRAINING
    conda:
        "../../envs/train.yaml"
    threads: PLAN.threads("train")
    resources:
        **PLAN.resources("train"),
    params:
        numerics=PLAN.numerics(),
        run=PLAN.train.run_json,
        code=PLAN.train.code,
        work=paths.TRAIN_WORK,
        reference=PLAN.train.reference_option,
        processes=PLAN.processes("train"),
    shell:
        "{params.numerics}python -m fpa train --model {input.model} --train {input.train} --val {input.val} "
        "{params.reference} --run-json {params.run:q} --method {wildcards.method} "
        "--seed {wildcards.seed} --code {params.code} --processes {params.processes} --threads {threads} "
        "--nodes {resources.nodes} --work {params.work} --out {output.checkpoint} --snapshots {output.snapshots} "
        "> {log} 2>&1"


# Online methods (GRPO, DAPO): TRL's GRPOTrainer samples from the policy as it trains, rewarded
# by the dataset's grader; the same outputs as rule train, so evaluation and curves are shared.
if PLAN.online_runs:

    rule train_online:
        input:
            unpack(PLAN.train.online_inputs),
        output:
            checkpoint=directory(paths.CHECKPOINT),
            snapshots=directory(paths.SNAPSHOTS),
        log:
            "logs/train_online/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/train_online/{model}/{method}/{seed}.tsv"
        wildcard_constraints:
            method=PLAN.train.run_pattern(online=True),
        priority: Priority.TRAINING
        conda:
            GENERATION_ENV
        threads: PLAN.threads("train")
        resources:
            **PLAN.resources("train"),
        params:
            numerics=PLAN.numerics(),
            run=PLAN.train.run_json,
            sampling=PLAN.train.online_config,
            grader=PLAN.train.dataset_grader(),
            code=PLAN.train.online_code,
            work=paths.TRAIN_WORK,
            processes=PLAN.processes("train"),
        shell:
            "{params.numerics}python -m fpa train-online --model {input.model} --problems {input.problems} "
            "--exclude {input.exclude} --run-json {params.run:q} --config-json {params.sampling:q} "
            "--grader {params.grader} --method {wildcards.method} --seed {wildcards.seed} --code {params.code} "
            "--processes {params.processes} --threads {threads} --work {params.work} "
            "--out {output.checkpoint} --snapshots {output.snapshots} > {log} 2>&1"
