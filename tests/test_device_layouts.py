"""Raw device buffers as HailoRT hands them out under HAILO_DISABLE_PP (5.x) or from C++ raw
streams: the core reads NHWC/FCR with padded width and features, NHCW, and F8CR (blocks of 8
features per column) where each element lies. The reference layouts are NumPy index formulas
written from HailoRT's transform.cpp (v5.2.0: transform__d2h_NHCW_to_NHWC reads element (h, w, c)
of an NHCW frame at h*Wp*Cp + c*Wp + w; transform__d2h_F8CR at h*Wp*Cp + (c - c%8)*Wp + w*8 + c%8;
NHWC/FCR rows are h*Wp*Cp + w*Cp + c), each element placed by its own offset; the same tensors
read dense must decode to the same detections, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd


def _offset(order, h, w, c, padded):
    hp, wp, cp = padded
    if order in ("NHWC", "FCR"):
        return h * wp * cp + w * cp + c
    if order == "NHCW":
        return h * wp * cp + c * wp + w
    if order == "F8CR":
        return h * wp * cp + (c - c % 8) * wp + w * 8 + c % 8
    raise ValueError(order)


def _device(host, order, padded, fill):
    """The device frame: every logical element at its offset, padding bytes `fill` (never read)."""
    hp, wp, cp = padded
    item = host.dtype.itemsize
    n = hp * wp * cp
    n += -(n * item) % 8 // item  # HailoRT's frames are a multiple of 8 bytes
    flat = np.full(n, fill, host.dtype)
    H, W, C = host.shape
    hh, ww, cc = np.meshgrid(np.arange(H), np.arange(W), np.arange(C), indexing="ij")
    flat[_offset(order, hh, ww, cc, padded)] = host
    return flat


CASES = [  # (box order, box padded, cls order, cls padded, dtype)
    ("FCR", (20, 24, 64), "NHCW", (20, 24, 8), "uint8"),
    ("F8CR", (20, 24, 64), "NHCW", (20, 20, 5), "uint16"),
    ("F8CR", (21, 20, 64), "F8CR", (20, 24, 8), "uint8"),
    ("NHWC", (20, 21, 70), "FCR", (20, 22, 6), "uint16"),
]


@pytest.mark.parametrize("box_order,box_pad,cls_order,cls_pad,dtype", CASES)
def test_device_layouts_read_where_they_lie(box_order, box_pad, cls_order, cls_pad, dtype):
    rng = np.random.default_rng(len(box_order) * 7 + box_pad[0] + cls_pad[2] + len(dtype))
    hi = 255 if dtype == "uint8" else 65535
    box = rng.integers(0, hi + 1, (3, 20, 20, 64)).astype(dtype)
    cls = rng.integers(0, hi + 1, (3, 20, 20, 5)).astype(dtype)
    q = dict(zp=hi * 0.4, scale=0.08 if dtype == "uint8" else 0.0003)
    cq = dict(zp=0.0, scale=1.0 / hi)
    host = hd.DecoderConfig([hd.OutputInfo("b", (20, 20, 64), dtype, "NHWC", **q),
                             hd.OutputInfo("c", (20, 20, 5), dtype, "NHWC", **cq)],
                            [hd.Head("b", "c", 32)], image_size=(640, 640), score_threshold=0.6)
    dev = host.replace(outputs=[
        hd.OutputInfo("b", (20, 20, 64), dtype, box_order, padded_shape=box_pad, device=True, **q),
        hd.OutputInfo("c", (20, 20, 5), dtype, cls_order, padded_shape=cls_pad, device=True, **cq)])
    want = hd.Decoder(host)({"b": box, "c": cls})
    assert sum(len(d) for d in want) > 0
    for fill in (0, hi):
        frames = {"b": np.stack([_device(f, box_order, box_pad, fill) for f in box]),
                  "c": np.stack([_device(f, cls_order, cls_pad, fill) for f in cls])}
        got = hd.Decoder(dev)(frames)
        for g, r in zip(got, want):
            np.testing.assert_array_equal(g.class_ids, r.class_ids)
            np.testing.assert_array_equal(g.scores, r.scores)
            np.testing.assert_array_equal(g.boxes, r.boxes)
