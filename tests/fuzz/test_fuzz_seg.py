"""Fuzzing segmentation: -seg configs and buffers, HAILO_NMS_WITH_BYTE_MASK input, the mask
rendering binding (tests/fuzz/seg_cases.py; FUZZING.md)."""

from __future__ import annotations

import pytest
from hypothesis import given

from .decoder_cases import fuzz_settings
from .seg_cases import byte_mask_specs, render_specs, run_any, seg_specs

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@fuzz_settings(60)
@given(seg_specs(valid=True))
def test_fuzz_seg_valid(spec):
    """Valid -seg configs (every dtype, host and device prototype layouts, per-channel
    quantization, thresholds, batches, threads): masks inside their boxes, empty masks dropped
    when asked, the byte-mask round trip, every SIMD path and a decode of copies the same."""
    run_any(spec)


@fuzz_settings(60)
@given(seg_specs(valid=False))
def test_fuzz_seg_faults(spec):
    """Prototype channels or grid that do not fit, a coefficient grid off by one, NaN in a float
    prototype, a missing prototype buffer or output, a zero scale: refused with ValueError/TypeError."""
    run_any(spec)


@fuzz_settings(150)
@given(byte_mask_specs())
def test_fuzz_byte_mask_input(spec):
    run_any(spec)


@fuzz_settings(150)
@given(render_specs())
def test_fuzz_render_masks(spec):
    run_any(spec)
