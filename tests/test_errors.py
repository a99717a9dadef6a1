"""Bad input gets a clear exception naming the output, the expected and the actual value."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from test_config import yolo_outputs


def small_config(dtype="uint8", **kw):
    outs = [hd.OutputInfo("m/box", (4, 4, 64), dtype, "FCR", zp=10, scale=0.1),
            hd.OutputInfo("m/cls", (4, 4, 3), dtype, "NHWC", zp=0, scale=0.01)]
    return hd.DecoderConfig(outs, [hd.Head("m/box", "m/cls", 8)], **kw)


def frames(dtype="uint8"):
    return {"m/box": np.zeros((4, 4, 64), dtype), "m/cls": np.zeros((4, 4, 3), dtype)}


@pytest.fixture
def dec():
    return hd.Decoder(small_config())


def test_missing_and_extra_outputs(dec):
    f = frames()
    del f["m/cls"]
    with pytest.raises(ValueError, match=r"missing \['m/cls'\]"):
        dec(f)
    f = frames()
    f["m/other"] = np.zeros(3, np.uint8)
    with pytest.raises(ValueError, match=r"unexpected \['m/other'\]"):
        dec(f)


def test_wrong_shape(dec):
    f = frames()
    f["m/cls"] = np.zeros((4, 4, 2), np.uint8)
    with pytest.raises(ValueError, match=r"'m/cls': expected shape \(4, 4, 3\).*got \(4, 4, 2\)"):
        dec(f)


def test_wrong_dtype(dec):
    f = frames()
    f["m/box"] = f["m/box"].astype(np.uint16)
    with pytest.raises(TypeError, match="'m/box': expected dtype uint8, got uint16"):
        dec(f)


def test_byte_swapped_dtype_is_refused():
    """'>f4' has the kind and size of float32: only the dtype comparison tells it apart."""
    d = hd.Decoder(small_config("float32"))
    f = frames("float32")
    f["m/cls"] = f["m/cls"].astype(">f4")
    with pytest.raises(TypeError, match="'m/cls': expected dtype float32, got >f4"):
        d(f)


def test_non_contiguous(dec):
    f = frames()
    f["m/box"] = np.zeros((4, 8, 64), np.uint8)[:, ::2]
    # (the fast path leaves this check to the core; the message is still the full one, with the fix)
    with pytest.raises(ValueError, match=r"'m/box': array is not C-contiguous \(it is read in place; pass numpy"):
        dec(f)


def test_unaligned_array():
    d = hd.Decoder(small_config("float32"))
    f = frames("float32")
    raw = np.zeros(f["m/cls"].nbytes + 1, np.uint8)
    f["m/cls"] = np.frombuffer(raw.data, np.float32, count=48, offset=1).reshape(4, 4, 3)
    with pytest.raises(ValueError, match=r"'m/cls': array data is not aligned to its 4-byte elements .*requirements='CA'"):
        d(f)
    with pytest.raises(ValueError, match="'m/cls': array data is not aligned"):  # the C++ guard too
        d._core.decode([f["m/box"], f["m/cls"]], 1)


def test_batch_mismatch(dec):
    f = frames()
    f["m/box"] = np.zeros((2, 4, 4, 64), np.uint8)
    with pytest.raises(ValueError, match="batch size"):
        dec(f)


def test_not_an_array(dec):
    f = frames()
    f["m/box"] = f["m/box"].tolist()
    with pytest.raises(TypeError, match="'m/box': expected a numpy.ndarray, got list"):
        dec(f)


def test_nan_in_float_input():
    d = hd.Decoder(small_config("float32"))
    f = frames("float32")
    f["m/box"][1, 2, 5] = np.nan
    with pytest.raises(ValueError, match=r"'m/box': non-finite value nan .*\(1, 2, 5\)"):
        d(f)
    f = frames("float32")
    f["m/cls"][0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="'m/cls': non-finite value inf"):
        d(f)


@pytest.mark.parametrize("kw, match", [
    (dict(scale=0.0), r"'x': scale must be > 0, got 0.0"),
    (dict(scale=-1.0), "scale must be > 0"),
    (dict(scale=float("nan")), "scale must be finite"),
    (dict(zp=float("inf")), "zp must be finite"),
    (dict(scale=[1.0, 2.0]), "must have 1 or 3 values"),
    (dict(order="NHCW"), "NHCW exists only as a raw device buffer"),
    (dict(order="XYZ"), "order must be one of"),
    (dict(padded_shape=(4, 4, 8)), "host buffers are dense"),
    (dict(device=True, order="F8CR", padded_shape=(4, 4, 4)), "multiple of 8"),
    (dict(device=True, padded_shape=(3, 4, 3)), "padded_shape must be"),
])
def test_output_info_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        hd.OutputInfo("x", (4, 4, 3), **{"zp": 0.0, "scale": 1.0, **kw})


def test_output_info_type_errors():
    with pytest.raises(TypeError, match="dtype must be one of"):
        hd.OutputInfo("x", (4, 4, 3), "int8")
    with pytest.raises(TypeError, match="shape must be"):
        hd.OutputInfo("x", "abc")


@pytest.mark.parametrize("kw, match", [
    (dict(score_threshold=float("nan")), r"score_threshold must be a number in \[0, 1\], got NaN"),
    (dict(iou_threshold=float("inf")), r"iou_threshold must be a number in \[0, 1\], got Infinity"),
    (dict(score_test="=>"), "score_test must be one of"),
    (dict(max_per_class=-1), r"max_per_class must be null \(no cap\) or an integer in \[0, 1048576\], got -1"),
    (dict(box_format="xywh"), "box_format must be one of"),
    (dict(semantics="torch"), "semantics must be one of"),
])
def test_setting_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        small_config(**kw)


def test_unknown_setting():
    with pytest.raises(TypeError, match=r'unknown key "score_thresh"; did you mean "score_threshold"\?'):
        small_config(score_thresh=0.3)


def test_config_structure_errors():
    outs = yolo_outputs(nc=2)
    with pytest.raises(ValueError, match="belong to no head"):
        hd.DecoderConfig(outs, [hd.Head(outs[0].name, outs[1].name, 8)])
    with pytest.raises(ValueError, match="not among the outputs"):
        hd.DecoderConfig(outs[:2], [hd.Head("nope", outs[1].name, 8)])
    bad_box = [hd.OutputInfo("b", (4, 4, 30), zp=0.0, scale=1.0), hd.OutputInfo("c", (4, 4, 3), zp=0.0, scale=1.0)]
    with pytest.raises(ValueError, match="30 channels, not 4 x bins"):
        hd.DecoderConfig(bad_box, [hd.Head("b", "c", 8)])
    grids = [hd.OutputInfo("b", (4, 4, 64), zp=0.0, scale=1.0), hd.OutputInfo("c", (5, 4, 3), zp=0.0, scale=1.0)]
    with pytest.raises(ValueError, match="grids differ"):
        hd.DecoderConfig(grids, [hd.Head("b", "c", 8)])
    with pytest.raises(ValueError, match="does not divide image_size"):
        hd.DecoderConfig(outs, image_size=(100, 100))
    # Out of the core's 32-bit range: a clear error, not the binding's generic TypeError.
    for size in [(10**12, 640), (640, 2**31), (0, 640)]:
        with pytest.raises(ValueError, match=r"image_size must be \[height, width\], two integers in \[1, 1048576\], "
                                             r"got \[" + str(size[0])):
            hd.DecoderConfig(outs, image_size=size)
    heads = hd.DecoderConfig(outs).heads
    with pytest.raises(ValueError, match="stride must be positive and at most 1048576, got 4294967296"):
        hd.DecoderConfig(outs, [hd.Head(h.box, h.cls, 2**32) for h in heads], image_size=(640, 640))


def test_raw_device_buffer_too_small():
    outs = [hd.OutputInfo("b", (2, 2, 64), "uint8", "NHCW", device=True, padded_shape=(2, 3, 64), zp=0.0, scale=1.0),
            hd.OutputInfo("c", (2, 2, 3), "uint8", "NHCW", device=True, padded_shape=(2, 3, 8), zp=0.0, scale=1.0)]
    d = hd.Decoder(hd.DecoderConfig(outs, [hd.Head("b", "c", 8)]))
    ok = {"b": np.zeros(2 * 3 * 64, np.uint8), "c": np.zeros(2 * 3 * 8, np.uint8)}
    assert len(d(ok)) == 0
    with pytest.raises(ValueError, match=r"'c': expected shape .*\(48,\).*got \(47,\)"):
        d({"b": ok["b"], "c": np.zeros(47, np.uint8)})


def test_core_guard_never_reads_out_of_bounds():
    """Even bypassing the Python checks, the C++ boundary refuses short buffers."""
    from hailo_decode import _core
    d = hd.Decoder(small_config())
    with pytest.raises(ValueError, match="'m/cls': buffer holds 47 elements, 1 frame\\(s\\) need 48"):
        d._core.decode([np.zeros((4, 4, 64), np.uint8), np.zeros(47, np.uint8)], 1)
    with pytest.raises(ValueError, match="2 frame\\(s\\) need"):
        d._core.decode([np.zeros((4, 4, 64), np.uint8), np.zeros(48, np.uint8)], 2)
    with pytest.raises(TypeError, match="'m/box': dtype float32 does not match"):
        d._core.decode([np.zeros((4, 4, 64), np.float32), np.zeros(48, np.uint8)], 1)
    assert _core is not None


def test_decode_to_hailo_nms_out_too_small(dec):
    with pytest.raises(ValueError, match="need 1503"):
        dec.decode_to_hailo_nms(frames(), out=np.zeros(100, np.float32))
