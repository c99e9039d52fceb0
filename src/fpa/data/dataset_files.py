"""The catalog files each catalog-built ``dataset.source`` reads (what ``fpa lock`` pins and the
plan downloads)."""

#: (section, entry) of the catalog files each catalog-built ``dataset.source`` reads.
DATASET_FILES = {
    # the 12K MATH training split, and MATH-P, which it must exclude
    "math12k": (("training", "math_train"), ("training", "math_test"), ("benchmarks", "math500"),
                ("benchmarks", "math_perturb_simple"), ("benchmarks", "math_perturb_hard")),
    # the code training problems, in priority order
    "taco_apps": (("code", "taco_train"), ("code", "apps_train")),
    # the Step-DPO preference pairs (fpa.data.step_dpo)
    "step_dpo": (("preference", "math_step_dpo"),),
}
MATH12K_FILES = tuple(part for _, part in DATASET_FILES["math12k"])
CODE_TRAIN_FILES = tuple(part for _, part in DATASET_FILES["taco_apps"])
STEP_DPO_FILE = DATASET_FILES["step_dpo"][0][1]
