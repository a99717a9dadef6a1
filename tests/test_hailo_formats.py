"""HailoRT's NMS output forms: the flat HAILO_NMS_BY_CLASS buffer, the pyhailort list, the
tf_nms_format array, and decode_hailo_nms turning each back into Detections."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from conftest import demo_config, uint8_frames


def _dets(rows, num_classes=3, max_per_class=4):
    """rows: (class, score, ymin, xmin, ymax, xmax), given best score first."""
    a = np.array(rows, dtype=np.float64).reshape(-1, 6)
    return hd.Detections(a[:, 2:6], a[:, 1], a[:, 0].astype(np.int32), box_format="yxyx_normalized",
                         image_size=(640, 480), num_classes=num_classes, max_per_class=max_per_class)


ROWS = [(2, 0.9, .1, .2, .3, .4), (0, 0.8, .5, .5, .6, .6), (2, 0.7, .0, .0, .1, .1), (2, 0.6, .2, .2, .3, .3)]


def _expected_flat(rows, num_classes, max_per_class):
    """HailoRT's layout written out longhand: per class a count then its boxes, then zeros."""
    out = []
    for k in range(num_classes):
        mine = [r for r in rows if r[0] == k][:max_per_class]
        out.append(float(len(mine)))
        for _, s, y0, x0, y1, x1 in mine:
            out += [y0, x0, y1, x1, s]
    out += [0.0] * (num_classes * (1 + 5 * max_per_class) - len(out))
    return np.array(out, dtype=np.float32)


def test_flat_buffer_layout():
    flat = _dets(ROWS).to_hailo_nms_buffer()
    assert flat.dtype == np.float32 and flat.shape == (3 * (1 + 5 * 4),)
    np.testing.assert_array_equal(flat, _expected_flat(ROWS, 3, 4))
    assert hd.hailo_nms_buffer_size(80, 100) == 40080  # HailoRT's 160,320 bytes


def test_flat_buffer_cap_and_caller_array():
    out = np.full(3 * (1 + 5 * 2) + 7, -5.0, dtype=np.float32)  # larger than needed, full of garbage
    res = _dets(ROWS, max_per_class=2).to_hailo_nms_buffer(out)
    assert res is out
    np.testing.assert_array_equal(out[:33], _expected_flat(ROWS, 3, 2))
    assert (out[33:] == 0).all()  # unused tail zeroed, past the HailoRT size too


def test_flat_buffer_bad_caller_array():
    d = _dets(ROWS)
    with pytest.raises(ValueError, match="needs 63"):
        d.to_hailo_nms_buffer(np.zeros(62, np.float32))
    with pytest.raises(TypeError, match="float32"):
        d.to_hailo_nms_buffer(np.zeros(63, np.float64))
    with pytest.raises(TypeError, match="C-contiguous"):
        d.to_hailo_nms_buffer(np.zeros(126, np.float32)[::2])
    with pytest.raises(ValueError, match=r"class ids must lie in \[0, 2\)"):
        d.to_hailo_nms_buffer(num_classes=2)


def test_pyhailort_list_form():
    lst = _dets(ROWS).to_hailo_nms()
    assert isinstance(lst, list) and len(lst) == 3
    assert lst[1].shape == (0, 5) and lst[1].dtype == np.float64  # pyhailort's empty class
    assert lst[0].dtype == np.float32 and lst[0].shape == (1, 5)
    np.testing.assert_allclose(lst[0][0], [.5, .5, .6, .6, .8], rtol=1e-6)
    np.testing.assert_allclose(lst[2][:, 4], [.9, .7, .6], rtol=1e-6)
    np.testing.assert_allclose(lst[2][0, :4], [.1, .2, .3, .4], rtol=1e-6)


def test_tf_form():
    tf = _dets(ROWS).to_hailo_nms(tf_format=True)
    assert tf.shape == (3, 5, 4) and tf.dtype == np.float32
    np.testing.assert_allclose(tf[2][:, 0], [.1, .2, .3, .4, .9], rtol=1e-6)  # column = one box
    np.testing.assert_allclose(tf[2][4, :3], [.9, .7, .6], rtol=1e-6)
    assert (tf[2][:, 3] == 0).all() and (tf[1] == 0).all()
    np.testing.assert_allclose(tf[0][:, 0], [.5, .5, .6, .6, .8], rtol=1e-6)


@pytest.mark.parametrize("form", ["flat", "list", "tf"])
def test_decode_hailo_nms_round_trip(form):
    d = _dets(ROWS)
    src = {"flat": d.to_hailo_nms_buffer(), "list": d.to_hailo_nms(), "tf": d.to_hailo_nms(tf_format=True)}[form]
    back = hd.decode_hailo_nms(src, num_classes=3 if form == "flat" else None, image_size=(640, 480))
    assert isinstance(back, hd.Detections) and back.box_format == "yxyx_normalized"
    np.testing.assert_allclose(back.scores, [.9, .8, .7, .6], rtol=1e-6)
    np.testing.assert_array_equal(back.class_ids, [2, 0, 2, 2])
    np.testing.assert_allclose(back.boxes, d.boxes, rtol=1e-6)
    px = hd.decode_hailo_nms(src, num_classes=3, image_size=(640, 480), box_format="xyxy_pixels")
    np.testing.assert_allclose(px.boxes[0], [.2 * 480, .1 * 640, .4 * 480, .3 * 640], rtol=1e-5)


def test_decode_hailo_nms_batches():
    a, b = _dets(ROWS), _dets(ROWS[:1])
    flat = np.stack([a.to_hailo_nms_buffer(), b.to_hailo_nms_buffer()])
    tf = np.stack([a.to_hailo_nms(tf_format=True), b.to_hailo_nms(tf_format=True)])
    lists = [a.to_hailo_nms(), b.to_hailo_nms()]
    for src in (flat, tf, lists):
        out = hd.decode_hailo_nms(src, num_classes=3)
        assert [len(x) for x in out] == [4, 1]


def test_decode_hailo_nms_rejects_corrupt_buffers():
    flat = _dets(ROWS).to_hailo_nms_buffer()
    bad = flat.copy()
    bad[0] = 1000  # a count that runs past the end
    with pytest.raises(ValueError, match="past the end"):
        hd.decode_hailo_nms(bad, num_classes=3)
    bad[0] = 1.5
    with pytest.raises(ValueError, match="whole number"):
        hd.decode_hailo_nms(bad, num_classes=3)
    with pytest.raises(ValueError, match="needs num_classes"):
        hd.decode_hailo_nms(flat)
    with pytest.raises(ValueError, match=r"\[classes, 5, max_per_class\]"):
        hd.decode_hailo_nms(np.zeros((3, 4, 2), np.float32))


def test_decoder_output_in_hailo_forms(uint8_data):
    """The raw path's Detections and its flat buffer agree, and the flat buffer parses back."""
    dec = hd.Decoder(demo_config(uint8_data, score_threshold=0.05))
    frames = uint8_frames(uint8_data)
    dets = dec(frames)
    out = np.full((len(dets), 2 * (1 + 5 * 100)), np.nan, dtype=np.float32)
    res = dec.decode_to_hailo_nms(frames, out=out)
    assert res is out and not np.isnan(out).any()
    for i, d in enumerate(dets):
        np.testing.assert_array_equal(out[i], d.to_hailo_nms_buffer())
        back = hd.decode_hailo_nms(out[i], num_classes=2)
        key = lambda x: sorted(zip(x.class_ids.tolist(), x.scores.tolist(), map(tuple, x.boxes.tolist())))  # noqa
        assert key(back) == key(d)
    single = dec.decode_to_hailo_nms({k: v[0] for k, v in frames.items()})
    np.testing.assert_array_equal(single, out[0])


@pytest.mark.parametrize("kw, match", [
    (dict(num_classes=-1), r"num_classes must be None or an integer >= 1 \(at most 1048576\), got -1"),
    (dict(num_classes=0), r"num_classes must be None or an integer >= 1 \(at most 1048576\), got 0"),
    (dict(num_classes=10**12), r"got 1000000000000"),
    (dict(num_classes=True), r"got True"),
    (dict(num_classes=3, max_per_class=10**15), r"max_per_class must be None or an integer >= 0 \(at most 1048576\), got 10+"),
])
def test_decode_hailo_nms_bad_counts(kw, match):
    flat = np.zeros(3 * (1 + 5 * 4), np.float32)
    with pytest.raises(ValueError, match=match):
        hd.decode_hailo_nms(flat, **kw)
