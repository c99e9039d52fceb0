"""benchmarks/numerics/numerics.py: two CPUs' fingerprints compared setting by setting, and this CPU's record
(committed) rendered with the workflow's pin among its settings."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from numerics import numerics  # noqa: E402

from fpa.provenance.cpu import VENDOR_NAMES  # noqa: E402


def _record(vendor: str, hashes: dict[str, dict[str, str]]) -> dict:
    return {"cpu": {"vendor": vendor, "model": f"a {vendor} CPU", "flags": ["avx2"]},
            "settings": {setting: {"hashes": ops} for setting, ops in hashes.items()}}


def test_a_setting_is_one_world_only_where_every_op_has_the_same_bits():
    amd = _record("AuthenticAMD", {"AVX2,STRICT": {"matmul": "a1", "SiLU": "s"}, "COMPATIBLE": {"matmul": "c", "SiLU": "s"}})
    intel = _record("GenuineIntel", {"AVX2,STRICT": {"matmul": "i1", "SiLU": "s"}, "COMPATIBLE": {"matmul": "c", "SiLU": "s"},
                                     "AVX": {"matmul": "x", "SiLU": "s"}})
    assert numerics.compare(amd, intel) == ["AuthenticAMD a AuthenticAMD CPU vs GenuineIntel a GenuineIntel CPU",
                                            "MKL_CBWR=AVX2,STRICT: 1 ops differ: matmul",
                                            "MKL_CBWR=COMPATIBLE: one world (every op the same bits)"]


def test_an_op_the_other_cpu_did_not_hash_differs():
    first = _record("AuthenticAMD", {"COMPATIBLE": {"matmul": "c", "AdamW step": "w"}})
    second = _record("GenuineIntel", {"COMPATIBLE": {"matmul": "c"}})
    assert numerics.compare(first, second)[1] == "MKL_CBWR=COMPATIBLE: 1 ops differ: AdamW step"


def test_the_committed_records_have_every_setting_and_render():
    for path in sorted(numerics.RESULTS.glob("numerics_*.json")):
        record = json.loads(path.read_text())
        assert set(record["settings"]) == {numerics.setting_name(s) for s in numerics.SETTINGS}, path
        assert record["cpu"]["vendor"] in VENDOR_NAMES and record["cpu"]["model"] in numerics.markdown(record)
