# Code benchmarks (graders in fpa.grading.code; docs/code_eval.md): a GPU job generates
# the completions, a CPU job grades them in the sandbox with a pool of threads. Their
# evaluation file has the same path and fields as a math benchmark's, so the tables
# (and `fpa explain`) take code columns like any other.
if CODE_BENCHES:

    rule generate_code:
        input:
            model=get_checkpoint,
            benchmarks=get_code_records(),
        output:
            expand(
                "results/completions/{{model}}/{{method}}/{{seed}}/{bench}.json",
                bench=CODE_BENCHES,
            ),
        log:
            "logs/generate_code/{model}/{method}/{seed}.log",
        benchmark:
            "logs/benchmarks/generate_code/{model}/{method}/{seed}.tsv"
        priority: Priority.AFTER_TRAINING
        conda:
            "../../envs/train.yaml"
        threads: get_threads("generate_code")
        resources:
            **get_resources("generate_code"),
        params:
            numerics=get_numerics(),
            benchmarks=get_sampling_args,
            eval=get_generate_code_config,
            code=get_code("fpa.cli.generate"),
            work="results/completions/{model}/{method}/{seed}/work",
        shell:
            "{params.numerics}python -m fpa generate --model {input.model} {params.benchmarks} "
            "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
            "--threads {threads} --gpus {resources.gpu} --work {params.work} > {log} 2>&1"

    rule evaluate_code:
        input:
            completions="results/completions/{model}/{method}/{seed}/{bench}.json",
            benchmark=get_benchmark_file,
            tasks=get_code_tasks,
        output:
            "results/eval/{model}/{method}/{seed}/{bench}.json",
        log:
            "logs/evaluate_code/{model}/{method}/{seed}/{bench}.log",
        benchmark:
            "logs/benchmarks/evaluate_code/{model}/{method}/{seed}/{bench}.tsv"
        wildcard_constraints:
            bench=get_code_bench_pattern(),
        priority: Priority.AFTER_TRAINING
        conda:
            "../../envs/eval_code.yaml"
        threads: get_threads("evaluate_code")
        resources:
            **get_resources("evaluate_code"),
        params:
            eval=get_eval_config,
            code=get_code_eval_code,
        shell:
            "python -m fpa evaluate-code --completions {input.completions} --benchmark {input.benchmark:q} "
            "--tasks {input.tasks:q} --config-json {params.eval:q} --seed {wildcards.seed} "
            "--code {params.code} --workers {threads} --out {output} > {log} 2>&1"


if config["dataset"]["source"] == "taco_apps":

    rule code_train_problems:
        input:
            unpack(get_code_train_files),
        output:
            "results/problems/train.jsonl",
        log:
            "logs/code_train_problems/train.log",
        benchmark:
            "logs/benchmarks/code_train_problems/train.tsv"
        priority: Priority.TRAINING_INPUTS
        conda:
            "../../envs/tables.yaml"
        resources:
            **get_resources("light"),
        params:
            code=get_code("fpa.cli.code"),
        shell:
            "python -m fpa code-train taco_train={input.taco_train:q} apps_train={input.apps_train:q} "
            "--code {params.code} --out {output} > {log} 2>&1"
