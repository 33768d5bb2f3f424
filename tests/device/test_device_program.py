"""The plumbing kernels and reductions share (cthreads/runtime/device_program.py): WGSL the
device rejects becomes one "internal compiler error" text with the numbered WGSL; pipelines
are kept per variant key (the oldest dropped past a limit). (The status words are covered by
test_boundscheck.py and test_loop_cap.py: a failure is reported once, later launches clean.)"""

from __future__ import annotations

import pytest

from cthreads.backend.pipeline import ShaderCompileError
from cthreads.codegen.program import Variant
from cthreads.errors import GpuKernelError
from cthreads.runtime.device_program import Pipelines, internal_error

from .kernels import saxpy

BROKEN = "fn ct_main() {\n    let x: f32 = undefined_name;\n}\n"

def test_a_rejected_kernel_variant_names_the_kernel_and_numbers_the_wgsl(device_name):
    rt = saxpy.runtime_for()
    with pytest.raises(GpuKernelError) as info:
        rt.pipelines.compile(Variant(form="nd_tile"), BROKEN, "ct_main", rt.bindings, rt.layout,
                             (), rt._internal_error)
    text = str(info.value)
    assert text.startswith("internal compiler error: the device compiler rejected the WGSL "
                           f"generated for kernel saxpy ({saxpy.program.filename}")
    assert "This is a cthreads bug; please report it with the kernel's source." in text
    assert text.endswith("Generated WGSL:\n   1 | fn ct_main() {\n"
                         "   2 |     let x: f32 = undefined_name;\n   3 | }")
    assert info.value.filename == saxpy.program.filename
    assert Variant(form="nd_tile") not in rt.compiled_variants()

def test_the_reduction_text():
    err = internal_error("the reduction shader of add", "function's source",
                         ShaderCompileError("naga: no such name", 2), "a\nb")
    assert str(err) == ("internal compiler error: the device compiler rejected the reduction "
                        "shader of add. This is a cthreads bug; please report it with the "
                        "function's source.\nnaga: no such name\n\nGenerated WGSL:\n"
                        "   1 | a\n   2 | b")

def test_pipelines_are_kept_per_key_up_to_the_limit(device_name):
    rt = saxpy.runtime_for()
    pipes = Pipelines(rt.ctx, limit=2)
    text = saxpy.program.render(Variant())
    seen = []
    for key in ("a", "b", "c"):
        seen.append(pipes.compile(key, text, "ct_main", rt.bindings, rt.layout, (),
                                  rt._internal_error))
        assert pipes.get(key) is seen[-1]
    assert pipes.keys() == {"b", "c"} and pipes.get("a") is None
