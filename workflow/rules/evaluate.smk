# One job per checkpoint samples and grades every benchmark whose grader reads no task file
# (all but the code benchmarks' own, fpa.config.graders.reads_task_file): the model is loaded
# once, and each benchmark's finished shards stay in work/, so a re-run after one
# benchmark's settings change regenerates only that benchmark. Its records are validated
# upstream (prepare_benchmark, validate_benchmark); a benchmark whose grading still fails
# fails the job after the others are graded, and the re-run regenerates nothing
# (fpa.cli.evaluate). `snakemake --keep-going` lets the other checkpoints' jobs go on.
if PLAN.eval_benches:

    rule evaluate:
        input:
            model=PLAN.checkpoint,
            benchmarks=PLAN.evaluate.records,
        output:
            expand(paths.EVALUATION, bench=PLAN.eval_benches, allow_missing=True),
        log:
            "logs/evaluate/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/evaluate/{model}/{method}/{seed}.tsv"
        priority: Priority.AFTER_TRAINING
        conda:
            GENERATION_ENV
        threads: PLAN.threads("evaluate")
        resources:
            **PLAN.resources("evaluate"),
        params:
            numerics=PLAN.numerics(),
            benchmarks=PLAN.sampling_args,
            eval=PLAN.evaluate.config_json,
            code=PLAN.evaluate.code(),
            work=paths.EVALUATION_WORK,
        shell:
            "{params.numerics}python -m fpa evaluate --model {input.model} {params.benchmarks} "
            "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
            "--threads {threads} --gpus {resources.gpu} --work {params.work} > {log} 2>&1"


# Accuracy through training: one job per run evaluates each of its snapshots on the curve
# benchmarks (each snapshot loaded once); shards are kept per snapshot, so a new snapshot
# step or curve benchmark adds only its own generations.
rule curve:
    input:
        snapshots=PLAN.evaluate.curve_snapshots,
        benchmarks=PLAN.evaluate.curve_records,
    output:
        paths.CURVE,
    log:
        "logs/curve/{model}/{method}/{seed}.log",
    benchmark:
        "logs/benchmarks/curve/{model}/{method}/{seed}.tsv"
    conda:
        GENERATION_ENV
    threads: PLAN.threads("evaluate")
    resources:
        **PLAN.resources("evaluate"),
    params:
        numerics=PLAN.numerics(),
        benchmarks=PLAN.evaluate.curve_args,
        eval=PLAN.evaluate.curve_config,
        code=PLAN.evaluate.curve_code(),
        work=paths.CURVE_WORK,
    shell:
        "{params.numerics}python -m fpa curve --snapshots {input.snapshots} {params.benchmarks} "
        "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
        "--threads {threads} --gpus {resources.gpu} --work {params.work} --out {output} > {log} 2>&1"


# Model selection (config model_selection): one job per run scores its snapshots and final
# checkpoint on the selection benchmark and links the best into selected/, which the run's
# evaluation then samples; finished shards are kept per candidate, as for the curves. A code
# dataset's validation problems are graded by their tests in the sandbox, on the job's CPUs.
if config["model_selection"]:

    rule select_checkpoint:
        input:
            snapshots=paths.SNAPSHOTS,
            checkpoint=paths.CHECKPOINT,
            benchmark=PLAN.evaluate.selection_records,
        output:
            directory(paths.SELECTED),
        log:
            "logs/select_checkpoint/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/select_checkpoint/{model}/{method}/{seed}.tsv"
        priority: Priority.AFTER_TRAINING
        conda:
            "../../envs/train.yaml"
        threads: PLAN.threads("evaluate")
        resources:
            **PLAN.resources("evaluate"),
        params:
            numerics=PLAN.numerics(),
            bench=PLAN.evaluate.selection_bench(),
            eval=PLAN.evaluate.selection_config,
            code=PLAN.evaluate.selection_code(),
            work=paths.SELECT_WORK,
        shell:
            "{params.numerics}python -m fpa select-checkpoint --snapshots {input.snapshots} "
            "--checkpoint {input.checkpoint} --benchmark {params.bench} {input.benchmark:q} "
            "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
            "--threads {threads} --gpus {resources.gpu} --work {params.work} --out {output} > {log} 2>&1"
