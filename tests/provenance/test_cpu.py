"""fpa.provenance.cpu: a provenance record names the CPU vendor, model and the flags kernels dispatch on."""

from __future__ import annotations

from fpa.provenance.cpu import parse_cpuinfo, torch_math_libraries

INTEL = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Processor
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw amx_tile amx_bf16

processor\t: 1
vendor_id\t: SomeoneElse
model name\t: not the first processor
"""


def test_the_first_processor_and_only_the_flags_that_choose_kernels():
    assert parse_cpuinfo(INTEL) == {"vendor": "GenuineIntel", "model": "Intel(R) Xeon(R) Processor",
                                    "flags": ["avx", "avx2", "fma", "avx512f", "avx512bw", "amx_tile", "amx_bf16"]}


def test_a_cpu_without_avx_has_no_flags():
    assert parse_cpuinfo("vendor_id\t: AuthenticAMD\nmodel name\t: AMD Athlon\nflags\t: fpu sse2\n")["flags"] == []


def test_torch_names_the_mkl_and_onednn_it_was_built_with():
    import torch

    libraries = torch_math_libraries(torch)
    assert libraries["torch"] == torch.__version__
    assert libraries["aten_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    if torch.backends.mkl.is_available():  # a wheel built without MKL records None, not a guess
        assert libraries["mkl"][0].isdigit(), libraries
