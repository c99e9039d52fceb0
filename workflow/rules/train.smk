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
        "--work {params.work} --out {output.checkpoint} --snapshots {output.snapshots} > {log} 2>&1"
