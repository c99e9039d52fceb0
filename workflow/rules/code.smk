# Code benchmarks (graders in fpa.grading.code; docs/code_eval.md): a GPU job generates
# the completions, a CPU job grades them in the sandbox with a pool of threads. Their
# evaluation file has the same path and fields as a math benchmark's, so the tables
# (and `fpa explain`) take code columns like any other.
if PLAN.code_benches:

    rule generate_code:
        input:
            model=PLAN.checkpoint,
            benchmarks=PLAN.code.records(),
        output:
            expand(paths.COMPLETIONS, bench=PLAN.code_benches, allow_missing=True),
        log:
            "logs/generate_code/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/generate_code/{model}/{method}/{seed}.tsv"
        priority: Priority.AFTER_TRAINING
        conda:
            "../../envs/train.yaml"
        threads: PLAN.threads("generate_code")
        resources:
            **PLAN.resources("generate_code"),
        params:
            numerics=PLAN.numerics(),
            benchmarks=PLAN.sampling_args,
            eval=PLAN.code.generate_config,
            code=code_fingerprint("fpa.cli.generate"),
            work=paths.COMPLETIONS_WORK,
        shell:
            "{params.numerics}python -m fpa generate --model {input.model} {params.benchmarks} "
            "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
            "--threads {threads} --gpus {resources.gpu} --work {params.work} > {log} 2>&1"

    rule evaluate_code:
        input:
            completions=paths.COMPLETIONS,
            benchmark=PLAN.code.bench_records,
            tasks=PLAN.code.tasks,
        output:
            paths.EVALUATION,
        log:
            "logs/evaluate_code/{model}/{method}/{seed}/{bench}.log",
        benchmark:
            "logs/benchmarks/evaluate_code/{model}/{method}/{seed}/{bench}.tsv"
        wildcard_constraints:
            bench=PLAN.code.bench_pattern(),
        priority: Priority.AFTER_TRAINING
        conda:
            "../../envs/eval_code.yaml"
        threads: PLAN.threads("evaluate_code")
        resources:
            **PLAN.resources("evaluate_code"),
        params:
            eval=PLAN.code.eval_config,
            code=PLAN.code.eval_code,
        shell:
            "python -m fpa evaluate-code --completions {input.completions} --benchmark {input.benchmark:q} "
            "--tasks {input.tasks:q} --config-json {params.eval:q} --seed {wildcards.seed} "
            "--code {params.code} --workers {threads} --out {output} > {log} 2>&1"


if config["dataset"]["source"] == "taco_apps":

    rule code_train_problems:
        input:
            unpack(PLAN.code.train_files),
        output:
            paths.TRAIN_PROBLEMS,
        log:
            "logs/code_train_problems/train.log",
        benchmark:
            "logs/benchmarks/code_train_problems/train.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/tables.yaml"
        resources:
            **PLAN.resources("light"),
        params:
            code=code_fingerprint("fpa.cli.code"),
        shell:
            "python -m fpa code-train taco_train={input.taco_train:q} apps_train={input.apps_train:q} "
            "--code {params.code} --out {output} > {log} 2>&1"
