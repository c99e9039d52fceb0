"""The candidate toy worlds of issue 59: each changes today's world (config/config.yaml) in its task, its base
model or its data only, never an objective, a grader or the evaluation, and runs at the default budget."""

from __future__ import annotations

_VARIED = {"models": {"toy": {"toy": {"trace_style": "varied"}}}}
_PEAKED = {"models": {"toy": {"toy": {"trace_style": "peaked"}}}}
_CODA = {"models": {"toy": {"toy": {"trace_style": "coda"}}}}
_MARKS = {"models": {"toy": {"toy": {"trace_style": "marks"}}}}
_T05 = {"dataset": {"temperature": 0.5}}

#: name -> (what changes against today's world, overrides of config/config.yaml)
WORLDS = {
    "today": ("today's world (config/config.yaml)", {}),
    "varied": ("each step's surface form and the ending's phrase drawn with uneven weights (trace_style varied)",
               _VARIED),
    "varied_t05": ("`varied`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)", {**_VARIED, **_T05}),
    "peaked": ("as `varied`, each choice's dominant form likelier (0.8) and its rare ones more numerous "
               "(trace_style peaked)", _PEAKED),
    "coda": ("today's steps, then a closing sentence of six words drawn with uneven weights and the ending's "
             "phrase so (trace_style coda)", _CODA),
    "coda_t05": ("`coda`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)", {**_CODA, **_T05}),
    "sft500": ("today's world with a less certain base model: half the SFT steps (steps 500)",
               {"models": {"toy": {"toy": {"steps": 500}}}}),
    "today_t05": ("today's base model, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)", _T05),
    "peaked_t05": ("`peaked`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)", {**_PEAKED, **_T05}),
    "marks": ("today's steps, each between a mark of one character drawn before it and one after it (0.6 a "
              "dominant mark, 0.05 each of eight rare ones): no choice moves an operand (trace_style marks)",
              _MARKS),
    "marks_t05": ("`marks`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7): the dominant mark "
                  "sharpened further than the base model gives it", {**_MARKS, **_T05}),
}
#: the analysis of a world whose Off-RL run stops before a snapshot of FUTURE_POLICY: sft500's base model gets
#: fewer problems partly right, and its 70 steps have no snapshot at 75; marks_t05's sharper samples leave fewer
#: problems with both outcomes (261 of its 640: 66 steps)
FUTURE_POLICY_TARGETS = {"sft500": [50], "marks_t05": [50]}
#: a world whose base model is another's (the same model settings): its directory starts from a copy of that
#: world's model, so the same SFT is not run twice
SAME_BASE_MODEL = {"varied_t05": "varied", "coda_t05": "coda", "today_t05": "today", "peaked_t05": "peaked",
                   "marks_t05": "marks"}

# What every world is measured with. The default budget snapshots every 25 steps of its 94
# (config/config.yaml): FPA's extrapolation from the first snapshot, against the later ones.
FUTURE_POLICY = {"anchor_step": 25, "target_steps": [50, 75], "lams": [0, 0.25, 0.5, 1, 2, 5]}
WINDOW = 10  # training steps averaged at the start and at the end of a run's log-ratios
