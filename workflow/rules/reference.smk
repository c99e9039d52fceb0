rule cache_reference:
    input:
        model=PLAN.base_model,
        train=paths.TRAIN_SPLIT,
        val=paths.VAL_SPLIT,
    output:
        directory(paths.REFERENCE_CACHE),
    log:
        "logs/cache_reference/{model}.log",
    benchmark:
        "logs/benchmarks/cache_reference/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    threads: PLAN.threads("cache_reference")
    resources:
        **PLAN.resources("cache_reference"),
    params:
        **PLAN.reference.settings(),
        numerics=PLAN.numerics(),
        device=PLAN.device("cache_reference"),
        code=code_fingerprint("fpa.cli.reference"),
    shell:
        "{params.numerics}python -m fpa cache-reference --model {input.model} --train {input.train} --val {input.val} "
        "--max-length {params.max_length} --precision {params.precision} --weights-dtype {params.weights_dtype} "
        "--attention {params.attention} "
        "--dtype {params.dtype} --device {params.device} "
        "--code {params.code} --threads {threads} "
        "--out {output} > {log} 2>&1"
