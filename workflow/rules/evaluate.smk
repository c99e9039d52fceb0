# One job per checkpoint samples and grades every benchmark whose grader reads no task file
# (all but the code benchmarks' own, fpa.config.graders.reads_task_file): the model is loaded
# once, and each benchmark's finished shards stay in work/, so a re-run after one
# benchmark's settings change regenerates only that benchmark. Its records are validated
# upstream (prepare_benchmark, validate_benchmark); a benchmark whose grading still fails
# fails the job after the others are graded, and the re-run regenerates nothing
# (fpa.cli.evaluate). `snakemake --keep-going` lets the other checkpoints' jobs go on.
if EVAL_BENCHES:

    rule evaluate:
        input:
            model=get_checkpoint,
            benchmarks=get_eval_records,
        output:
            expand(
                "results/eval/{{model}}/{{method}}/{{seed}}/{bench}.json",
                bench=EVAL_BENCHES,
            ),
        log:
            "logs/evaluate/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/evaluate/{model}/{method}/{seed}.tsv"
        priority: Priority.AFTER_TRAINING
        conda:
            GENERATION_ENV
        threads: get_threads("evaluate")
        resources:
            **get_resources("evaluate"),
        params:
            numerics=get_numerics(),
            benchmarks=get_sampling_args,
            eval=get_evaluate_config,
            code=graders_code("fpa.cli.evaluate", EVAL_BENCHES),
            work="results/eval/{model}/{method}/{seed}/work",
        shell:
            "{params.numerics}python -m fpa evaluate --model {input.model} {params.benchmarks} "
            "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
            "--threads {threads} --gpus {resources.gpu} --work {params.work} > {log} 2>&1"


# Accuracy through training: one job per run evaluates each of its snapshots on the curve
# benchmarks (each snapshot loaded once); shards are kept per snapshot, so a new snapshot
# step or curve benchmark adds only its own generations.
rule curve:
    input:
        snapshots=get_curve_snapshots,
        benchmarks=get_curve_records,
    output:
        "results/curves/{model}/{method}/{seed}.csv",
    log:
        "logs/curve/{model}/{method}/{seed}.log",
    benchmark:
        "logs/benchmarks/curve/{model}/{method}/{seed}.tsv"
    conda:
        GENERATION_ENV
    threads: get_threads("evaluate")
    resources:
        **get_resources("evaluate"),
    params:
        numerics=get_numerics(),
        benchmarks=get_curve_args,
        eval=get_curve_config,
        code=graders_code("fpa.cli.curve", config["curve_benchmarks"]),
        work="results/curves/{model}/{method}/{seed}/work",
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
            snapshots="results/train/{model}/{method}/{seed}/snapshots",
            checkpoint="results/train/{model}/{method}/{seed}/checkpoint",
            benchmark=get_selection_records,
        output:
            directory("results/train/{model}/{method}/{seed}/selected"),
        log:
            "logs/select_checkpoint/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/select_checkpoint/{model}/{method}/{seed}.tsv"
        priority: Priority.AFTER_TRAINING
        conda:
            "../../envs/train.yaml"
        threads: get_threads("evaluate")
        resources:
            **get_resources("evaluate"),
        params:
            numerics=get_numerics(),
            bench=config["model_selection"]["benchmark"],
            eval=get_selection_config,
            code=graders_code(
                "fpa.cli.select", [config["model_selection"]["benchmark"]]
            ),
            work="results/train/{model}/{method}/{seed}/select_work",
        shell:
            "{params.numerics}python -m fpa select-checkpoint --snapshots {input.snapshots} "
            "--checkpoint {input.checkpoint} --benchmark {params.bench} {input.benchmark:q} "
            "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
            "--threads {threads} --gpus {resources.gpu} --work {params.work} --out {output} > {log} 2>&1"
