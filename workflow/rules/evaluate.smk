rule evaluate:
    input:
        model=get_checkpoint,
        benchmark=get_benchmark_file,
    output:
        "results/eval/{model}/{method}/{seed}/{bench}.json",
    log:
        "logs/evaluate/{model}/{method}/{seed}/{bench}.log",
    conda:
        "../../envs/train.yaml"
    threads: 1
    resources:
        **get_resources("evaluate"),
    params:
        eval=get_eval_config,
        code=get_eval_code,
        work="results/eval/{model}/{method}/{seed}/work/{bench}",
    shell:
        "python -m fpa evaluate --model {input.model} --benchmark {input.benchmark} "
        "--config-json {params.eval:q} --seed {wildcards.seed} --code {params.code} "
        "--threads {threads} --work {params.work} --out {output} > {log} 2>&1"
