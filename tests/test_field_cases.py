"""The cases users bring from the field, end to end, on the real model outputs (the 2-class YOLOv8
of tests/fixtures/README.md on five photographs), renamed and re-laid-out the way compiled models
hand them out:

a. a 2-class "YOLO11n" whose six outputs carry DFC layer names (`yolo11n/conv54`, ...), listed in
   the HEF's order rather than by head, reported partly as FCR and partly as NHWC, with raw class
   logits (no sigmoid on chip), read once as UINT8 and once as FLOAT32 (dequantized by HailoRT, or
   by hand the way HailoRT does it). Both must give the very same detections, and those must be
   the model's own (the `ref25_*` references).
b. a 1-class YOLOv8 (class 0 of the fixture) compiled with the sigmoid on chip, configured from
   the DFC NMS JSON exactly as a user wrote it (layer numbers that do not follow the strides),
   returned in HailoRT's tf_nms_format [1, 5, 100] and flat HAILO_NMS_BY_CLASS forms, each checked
   against the pixel boxes and the NumPy reference decoder rather than against the package's own
   conversion.
c. a HEF whose NMS did compile: its HAILO_NMS_BY_CLASS output (packed here in NumPy from the
   layout HailoRT documents, tail left dirty as HailoRT leaves it) through the hailo_platform
   double's vstreams and bindings and hd.decode_hailo_nms gives the detections of the raw path.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import _core, hailort
from conftest import assert_equivalent_detections, assert_same_detections, reference_set
from reference_decoder import reference_decode

N_FRAMES = 5

# -- the hailo_platform double: conftest's `hp`, here without the HEF-file reader (the double's HEF
# paths are not files) ---------------------------------------------------------------------------


@pytest.fixture
def hp(hp, monkeypatch):
    monkeypatch.setattr(hailort, "_hef_module", lambda: None)
    return hp


def _fd():
    from hailo_platform import _fake_device
    return _fake_device


def _frame_list(frames):
    return [{k: v[i] for k, v in frames.items()} for i in range(len(next(iter(frames.values()))))]


def _vstreams(hp, path, format_type):
    hef = hp.HEF(path)
    ng = hp.VDevice().configure(hef, hp.ConfigureParams.create_from_hef(hef, interface=hp.HailoStreamInterface.PCIe))[0]
    in_params = hp.InputVStreamParams.make(ng, format_type=hp.FormatType.UINT8)
    out_params = hp.OutputVStreamParams.make(ng, format_type=format_type)
    return ng, in_params, out_params


def _images(n):
    return np.zeros((n, 640, 640, 3), dtype=np.uint8)


# -- comparisons -----------------------------------------------------------------------------------------


_same = assert_same_detections


def _as_set(d):
    """A Detections as a sorted list of (class, score, box...) rows: a multiset, order-free."""
    assert d.box_format == "yxyx_normalized"
    return sorted((int(c), float(s), *map(float, b)) for b, s, c in zip(d.boxes, d.scores, d.class_ids))


def _iou_xyxy(a, b):
    ow = min(a[2], b[2]) - max(a[0], b[0])
    oh = min(a[3], b[3]) - max(a[1], b[1])
    if ow <= 0 or oh <= 0:
        return 0.0
    inter = ow * oh
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _matches_reference(dets, float_data, ref="ref25"):
    """Per frame: as many detections as the model's reference, the same classes, and each reference
    box matched one-to-one by a box of its class with IoU > 0.8 (scores within the uint8
    quantization's reach)."""
    assert len(dets) == N_FRAMES
    total = 0
    for i, d in enumerate(dets):
        rb, rs, rc = reference_set(float_data, ref, i)
        assert len(d) == len(rs), f"frame {i}: {len(d)} detections, the model has {len(rs)}"
        assert sorted(d.class_ids.tolist()) == sorted(rc.tolist()), f"frame {i}"
        px = d.boxes_as("xyxy_pixels")
        free = set(range(len(d)))
        for box, score, cls in zip(rb, rs, rc):
            cands = [(_iou_xyxy(box, px[j]), j) for j in free if d.class_ids[j] == cls]
            iou, j = max(cands)
            assert iou > 0.8, f"frame {i}: reference box {box} of class {cls}: best IoU {iou:.3f}"
            assert abs(float(d.scores[j]) - float(score)) < 0.03, f"frame {i}"
            free.remove(j)
        total += len(d)
    assert total == len(float_data[f"{ref}_scores"]) == 9


def _dequantize(q, zp, scale):
    """HailoRT's dequantize_output for FLOAT32 vstreams: (float(q) - qp_zp) * qp_scale in float32."""
    return (q.astype(np.float32) - np.float32(zp)) * np.float32(scale)


# ======================================================================================================
# a. a 2-class YOLO11n: DFC layer names, mixed FCR/NHWC, raw logits, UINT8 and FLOAT32
# ======================================================================================================

NET11 = "yolo11n"
# fixture head -> (DFC layer, format order HailoRT reports)
YOLO11N = {"box_8": ("conv54", "FCR"), "cls_8": ("conv57", "NHWC"),
           "box_16": ("conv70", "NHWC"), "cls_16": ("conv73", "FCR"),
           "box_32": ("conv86", "FCR"), "cls_32": ("conv89", "NHWC")}
HEF_LISTING = ("cls_32", "box_8", "cls_16", "box_32", "cls_8", "box_16")  # not grouped by head
YOLO11N_HEADS = [(f"{NET11}/conv54", f"{NET11}/conv57", 8), (f"{NET11}/conv70", f"{NET11}/conv73", 16),
                 (f"{NET11}/conv86", f"{NET11}/conv89", 32)]
LOGITS = dict(class_activation="sigmoid", score_threshold=0.25)  # no sigmoid on chip


def _y11_name(key):
    return f"{NET11}/{YOLO11N[key][0]}"


def _y11_quant(data, key):
    return float(data[f"zp_{key}"]), float(data[f"scale_{key}"])


def yolo11n_uint8(data):
    """{name: uint8 (5, H, W, C)} as the vstreams hand them out."""
    return {_y11_name(k): np.ascontiguousarray(data[k]) for k in HEF_LISTING}


def yolo11n_float32(data):
    """The same outputs dequantized by hand exactly as HailoRT does for FLOAT32 vstreams."""
    return {_y11_name(k): _dequantize(data[k], *_y11_quant(data, k)) for k in HEF_LISTING}


def yolo11n_outputs(data, dtype="uint8"):
    """OutputInfo as a user writes them from `hailortcli parse-hef`: float32 outputs carry no quantization."""
    outs = []
    for k in HEF_LISTING:
        layer, order = YOLO11N[k]
        zp, scale = _y11_quant(data, k) if dtype == "uint8" else (0.0, 1.0)
        outs.append(hd.OutputInfo(f"{NET11}/{layer}", data[k].shape[1:], dtype, order, zp=zp, scale=scale))
    return outs


def _heads(cfg):
    return [(h.box, h.cls, h.stride) for h in cfg.heads]


@pytest.mark.parametrize("settings", [
    dict(LOGITS),  # what the user runs
    dict(class_activation="sigmoid", score_threshold=0.01, iou_threshold=1.0, iou_test=">", max_per_class=None),
], ids=["th0.25", "all_candidates"])
def test_yolo11n_uint8_and_float32_identical(uint8_data, settings):
    """The heads are paired from shapes whatever the listing order and reported orders; the
    dequantized float32 outputs give the uint8 results (same candidates and scores bit for bit,
    boxes to float rounding) on every kernel path."""
    cfg_u8 = hd.DecoderConfig(yolo11n_outputs(uint8_data), **settings)
    cfg_f32 = hd.DecoderConfig(yolo11n_outputs(uint8_data, "float32"), **settings)
    for cfg in (cfg_u8, cfg_f32):
        assert _heads(cfg) == YOLO11N_HEADS and cfg.image_size == (640, 640) and cfg.num_classes == 2
        assert [cfg.output(_y11_name(k)).order for k in HEF_LISTING] == [YOLO11N[k][1] for k in HEF_LISTING]
    raw_u8, raw_f32 = yolo11n_uint8(uint8_data), yolo11n_float32(uint8_data)
    active = hd.simd_info()["active"]
    try:
        for path in hd.simd_info()["available"]:
            _core.select_simd(path)
            u8 = hd.Decoder(cfg_u8)(raw_u8)
            f32 = hd.Decoder(cfg_f32)(raw_f32)
            assert_equivalent_detections(u8, f32)
            n = sum(len(d) for d in u8)
            assert n == (9 if settings["score_threshold"] == 0.25 else 283), path
    finally:
        _core.select_simd(active)


@pytest.mark.parametrize("box_scale", [0.3, 0.45])
def test_coarse_box_quantization_uint8_and_float32_identical(uint8_data, box_scale):
    """Box tensors requantized far more coarsely than the real ones: while 255 * scale <= 80 the
    uint8 DFL looks its exps up in a table relative to byte 255, past that it takes the float
    path; either way the uint8 outputs give the dequantized float32 outputs' detections."""
    data = dict(uint8_data)
    for k in ("box_8", "box_16", "box_32"):
        zp, scale = _y11_quant(uint8_data, k)
        x = _dequantize(uint8_data[k], zp, scale)
        # zero point 16: most bytes low, far below the table's reference byte 255
        data[k] = np.clip(np.round(x / box_scale) + 16, 0, 255).astype(np.uint8)
        data[f"zp_{k}"], data[f"scale_{k}"] = np.float32(16), np.float32(box_scale)
        assert len(np.unique(data[k])) > 20  # still a spread of logits, not a constant
    settings = dict(class_activation="sigmoid", score_threshold=0.01, iou_threshold=1.0, iou_test=">",
                    max_per_class=None)
    u8 = hd.Decoder(hd.DecoderConfig(yolo11n_outputs(data), **settings))(yolo11n_uint8(data))
    f32 = hd.Decoder(hd.DecoderConfig(yolo11n_outputs(data, "float32"), **settings))(yolo11n_float32(data))
    assert sum(len(d) for d in u8) == 283
    assert_equivalent_detections(u8, f32)


@pytest.mark.parametrize("semantics", ["hailort", "ultralytics"])
def test_yolo11n_matches_model_reference(uint8_data, float_data, semantics):
    """At 0.25 the uint8 and float32 outputs give the model's own detections (same count and
    classes per frame, boxes IoU > 0.8), with either preset."""
    kw = dict(semantics=semantics, **LOGITS)
    u8 = hd.Decoder(hd.DecoderConfig(yolo11n_outputs(uint8_data), **kw))(yolo11n_uint8(uint8_data))
    f32 = hd.Decoder(hd.DecoderConfig(yolo11n_outputs(uint8_data, "float32"), **kw))(yolo11n_float32(uint8_data))
    assert_equivalent_detections(u8, f32)
    _matches_reference(u8, float_data)


def _yolo11n_model(hp, data):
    fd = _fd()
    outs = []
    for k in HEF_LISTING:
        layer, order = YOLO11N[k]
        outs.append(fd.FakeOutput(f"{NET11}/{layer}", data[k].shape[1:], "uint8", order, *_y11_quant(data, k)))
    return fd.register(fd.FakeModel(NET11, outs, frames=_frame_list(yolo11n_uint8(data))))


def test_yolo11n_through_hailort_uint8_and_float32(hp, uint8_data, float_data):
    """InferVStreams with FormatType.UINT8 and FLOAT32, each decoder built by
    DecoderConfig.from_hailo from the vstream params the user made: HailoRT's FLOAT32 arrays are
    the hand dequantization bit for bit, and both give the direct path's detections, which are the
    model's."""
    path = _yolo11n_model(hp, uint8_data)
    results = {}
    for ftype in ("UINT8", "FLOAT32"):
        _fd().lookup(path).rewind()
        ng, in_params, out_params = _vstreams(hp, path, getattr(hp.FormatType, ftype))
        cfg = hd.DecoderConfig.from_hailo(ng, output_params=out_params, **LOGITS)
        assert _heads(cfg) == YOLO11N_HEADS and cfg.image_size == (640, 640)
        assert {o.dtype for o in cfg.outputs} == {ftype.lower()}
        assert [cfg.output(_y11_name(k)).order for k in HEF_LISTING] == [YOLO11N[k][1] for k in HEF_LISTING]
        if ftype == "UINT8":
            assert cfg.output(_y11_name("cls_32")).zp == float(uint8_data["zp_cls_32"])
        else:
            assert all(o.zp == 0.0 and o.scale == 1.0 for o in cfg.outputs)
        with hp.InferVStreams(ng, in_params, out_params) as pipeline:
            arrays = pipeline.infer(_images(N_FRAMES))
        expected = yolo11n_uint8(uint8_data) if ftype == "UINT8" else yolo11n_float32(uint8_data)
        for name, a in expected.items():
            assert arrays[name].dtype == a.dtype
            np.testing.assert_array_equal(arrays[name], a)  # bitwise for float32 too
        results[ftype] = hd.Decoder(cfg)(arrays)
    assert_equivalent_detections(results["UINT8"], results["FLOAT32"])
    _same(results["UINT8"], hd.Decoder(hd.DecoderConfig(yolo11n_outputs(uint8_data), **LOGITS))(yolo11n_uint8(uint8_data)))
    _matches_reference(results["FLOAT32"], float_data)


# ======================================================================================================
# b. a 1-class YOLOv8, sigmoid on chip, from the user's NMS JSON; tf_nms_format and the flat buffer
# ======================================================================================================

NET1 = "yolov8n_1class"
USER_JSON = ('{"nms_scores_th": 0.2, "nms_iou_th": 0.7, "max_proposals_per_class": 100, "image_dims": [640, 640], '
             '"classes": 1, "regression_length": 16, "background_removal": false, "bbox_decoders": '
             '[{"name": "bbox_decoder138", "stride": 8, "reg_layer": "conv138", "cls_layer": "conv139"}, '
             '{"name": "bbox_decoder110", "stride": 16, "reg_layer": "conv110", "cls_layer": "conv111"}, '
             '{"name": "bbox_decoder81", "stride": 32, "reg_layer": "conv81", "cls_layer": "conv83"}]}')
ONE_CLASS = {"box_8": "conv138", "cls_8": "conv139", "box_16": "conv110", "cls_16": "conv111",
             "box_32": "conv81", "cls_32": "conv83"}
ONE_CLASS_HEADS = [(f"{NET1}/conv138", f"{NET1}/conv139", 8), (f"{NET1}/conv110", f"{NET1}/conv111", 16),
                   (f"{NET1}/conv81", f"{NET1}/conv83", 32)]
SIGMOID_SCALE = 1.0 / 255
ONE_CLASS_COUNTS = [2, 1, 1, 3, 0]  # detections per frame at the JSON's 0.2 (class 0, "Normal")


def one_class_model(uint8_data, float_data, cls=0):
    """(frames {name: uint8 (5, H, W, C)}, {name: (zp, scale)}): the box heads as the chip emits them
    (uint8, per-tensor quantization), the class heads one channel of the model's logits through a
    sigmoid on chip, quantized as a Model Zoo compile with change_output_activation does it
    (scale 1/255, zero point 0)."""
    frames, quant = {}, {}
    for key, layer in ONE_CLASS.items():
        name = f"{NET1}/{layer}"
        if key.startswith("box"):
            frames[name] = np.ascontiguousarray(uint8_data[key])
            quant[name] = (float(uint8_data[f"zp_{key}"]), float(uint8_data[f"scale_{key}"]))
        else:
            logits = float_data[key][..., cls:cls + 1].astype(np.float32)
            scores = 1.0 / (1.0 + np.exp(-logits))
            frames[name] = np.ascontiguousarray(np.clip(np.rint(scores * 255), 0, 255).astype(np.uint8))
            quant[name] = (0.0, SIGMOID_SCALE)
    return frames, quant


def one_class_outputs(quant, frames):
    """In the order HailoRT sorts the names (conv110 < conv111 < conv138 < conv139 < conv81 < conv83)."""
    boxes = {b for b, _, _ in ONE_CLASS_HEADS}
    return [hd.OutputInfo(n, frames[n].shape[1:], "uint8", "FCR" if n in boxes else "NHWC", zp=quant[n][0],
                          scale=quant[n][1]) for n in sorted(frames)]


def _reference_spec(cfg, **over):
    spec = {"heads": [{"box": h.box, "cls": h.cls, "stride": h.stride} for h in cfg.heads],
            "outputs": {o.name: {"shape": o.shape, "dtype": o.dtype, "layout": "host", "order": o.order,
                                 "padded_shape": None, "zp": o.zp, "scale": o.scale} for o in cfg.outputs},
            "image_size": cfg.image_size, "activation": cfg.class_activation, "score_threshold": cfg.score_threshold,
            "score_test": cfg.score_test, "iou_threshold": cfg.iou_threshold, "iou_test": cfg.iou_test,
            "multi_label": cfg.multi_label, "agnostic": cfg.agnostic, "max_candidates": cfg.max_candidates,
            "max_per_class": cfg.max_per_class, "max_total": cfg.max_total, "tie_break": cfg.tie_break,
            "normalized": cfg.box_format.endswith("normalized"), "box_order": cfg.box_format[:4]}
    spec.update(over)
    return spec


def test_one_class_user_json(tmp_path, uint8_data, float_data):
    """The JSON as written (a file) pairs conv138+conv139 at stride 8, conv110+conv111 at 16,
    conv81+conv83 at 32 and takes its thresholds; detections are the NumPy reference's."""
    frames, quant = one_class_model(uint8_data, float_data)
    path = tmp_path / "yolov8n_1class_nms_config.json"
    path.write_text(USER_JSON)
    cfg = hd.DecoderConfig.from_nms_json(path, one_class_outputs(quant, frames))
    assert _heads(cfg) == ONE_CLASS_HEADS
    assert (cfg.num_classes, cfg.bins, cfg.image_size) == (1, 16, (640, 640))
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class) == (0.2, 0.7, 100)
    assert (cfg.class_activation, cfg.score_test, cfg.iou_test, cfg.box_format) == ("none", ">=", ">=", "yxyx_normalized")
    dict_cfg = hd.DecoderConfig.from_nms_json(json.loads(USER_JSON), one_class_outputs(quant, frames))
    assert repr(dict_cfg) == repr(cfg)
    dets = hd.Decoder(cfg)(frames)
    assert [len(d) for d in dets] == ONE_CLASS_COUNTS
    spec = _reference_spec(cfg)
    for i, d in enumerate(dets):
        rb, rs, rc = reference_decode({k: v[i] for k, v in frames.items()}, spec)
        assert len(d) == len(rs)
        np.testing.assert_array_equal(d.class_ids, rc)
        np.testing.assert_array_equal(d.scores, rs)
        np.testing.assert_allclose(d.boxes, rb, rtol=0, atol=2e-6)


def test_one_class_score_threshold_boundary(uint8_data, float_data):
    """At nms_scores_th 0.2 a sigmoid score of 51/255 passes (float32(51) * float32(1/255) >=
    float32(0.2), as HailoRT tests it) and 50/255 does not."""
    frames, quant = one_class_model(uint8_data, float_data)
    cfg = hd.DecoderConfig.from_nms_json(json.loads(USER_JSON), one_class_outputs(quant, frames))
    frame = {k: v[4].copy() for k, v in frames.items()}  # frame 4: no detection of class 0
    cls32 = f"{NET1}/conv83"
    assert frame[cls32].max() < 51
    frame[cls32][3, 4, 0] = 51
    frame[cls32][15, 15, 0] = 50
    d = hd.Decoder(cfg)(frame)
    assert len(d) == 1 and d.scores[0] == np.float32(51) * np.float32(SIGMOID_SCALE)
    y1, x1, y2, x2 = d.boxes[0] * 640
    assert y1 <= 3.5 * 32 <= y2 and x1 <= 4.5 * 32 <= x2  # the box of cell (3, 4) holds its anchor
    rb, rs, _ = reference_decode(frame, _reference_spec(cfg))
    np.testing.assert_array_equal(d.scores, rs)
    np.testing.assert_allclose(d.boxes, rb, rtol=0, atol=2e-6)


def _check_flat(buf, px, max_per_class=100):
    """HailoRT's HAILO_NMS_BY_CLASS layout for one class, checked against pixel xyxy detections:
    count, then count x [ymin, xmin, ymax, xmax, score] normalized by 640, then zeros."""
    assert buf.dtype == np.float32 and buf.shape == (1 + 5 * max_per_class,)
    n = len(px)
    assert buf[0] == n
    rows = buf[1:1 + 5 * n].reshape(n, 5)
    x1, y1, x2, y2 = px.boxes.T
    np.testing.assert_allclose(rows[:, :4], np.stack([y1, x1, y2, x2], axis=1) / 640, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(rows[:, 4], px.scores)
    assert np.all(np.diff(rows[:, 4]) <= 0)  # best first
    assert not np.any(buf[1 + 5 * n:])  # zero padding
    return rows


def test_one_class_tf_nms_format_and_flat_buffer(uint8_data, float_data):
    frames, quant = one_class_model(uint8_data, float_data)
    outputs = one_class_outputs(quant, frames)
    cfg = hd.DecoderConfig.from_nms_json(json.loads(USER_JSON), outputs)
    decoder = hd.Decoder(cfg)
    pixels = hd.Decoder(hd.DecoderConfig.from_nms_json(json.loads(USER_JSON), outputs, box_format="xyxy_pixels"))(frames)
    dets = decoder(frames)
    flat_batch = decoder.decode_to_hailo_nms(frames)
    assert flat_batch.shape == (N_FRAMES, 501) and flat_batch.dtype == np.float32
    out = np.full((N_FRAMES, 501), 7.0, dtype=np.float32)  # a reused buffer, dirty from last time
    assert decoder.decode_to_hailo_nms(frames, out=out) is out
    np.testing.assert_array_equal(out, flat_batch)
    for i, (d, px) in enumerate(zip(dets, pixels)):
        assert len(px) == ONE_CLASS_COUNTS[i] and px.box_format == "xyxy_pixels"
        tf = d.to_hailo_nms(tf_format=True)
        assert tf.shape == (1, 5, 100) and tf.dtype == np.float32
        buf = d.to_hailo_nms_buffer()
        single = decoder.decode_to_hailo_nms({k: v[i] for k, v in frames.items()})
        rows = _check_flat(buf, px)
        np.testing.assert_array_equal(single, buf)  # one frame, a batch, Detections: the same bytes
        np.testing.assert_array_equal(flat_batch[i], buf)
        n = len(px)
        np.testing.assert_array_equal(tf[0, :, :n], rows.T)
        assert not np.any(tf[0, :, n:])
        lst = d.to_hailo_nms()
        assert len(lst) == 1 and lst[0].shape == (n, 5)
        if n:
            np.testing.assert_array_equal(lst[0], rows)


@pytest.mark.parametrize("ftype", ["UINT8", "FLOAT32"])
def test_one_class_through_hailort_with_json(hp, uint8_data, float_data, ftype):
    """The same model behind the hailo_platform double, configured with
    DecoderConfig.from_hailo(network_group, nms_json, output_params=...): the JSON's heads and
    thresholds, and the direct path's detections for UINT8 and FLOAT32 vstreams alike."""
    frames, quant = one_class_model(uint8_data, float_data)
    fd = _fd()
    outs = [fd.FakeOutput(o.name, o.shape, "uint8", o.order, o.zp, o.scale) for o in one_class_outputs(quant, frames)]
    path = fd.register(fd.FakeModel(NET1, outs, frames=_frame_list(frames)))
    ng, in_params, out_params = _vstreams(hp, path, getattr(hp.FormatType, ftype))
    cfg = hd.DecoderConfig.from_hailo(ng, json.loads(USER_JSON), output_params=out_params)
    assert _heads(cfg) == ONE_CLASS_HEADS and {o.dtype for o in cfg.outputs} == {ftype.lower()}
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class, cfg.class_activation) == (0.2, 0.7, 100, "none")
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        got = hd.Decoder(cfg)(pipeline.infer(_images(N_FRAMES)))
    direct = hd.Decoder(hd.DecoderConfig.from_nms_json(json.loads(USER_JSON), one_class_outputs(quant, frames)))(frames)
    (_same if ftype == "UINT8" else assert_equivalent_detections)(got, direct)
    assert [len(d) for d in got] == ONE_CLASS_COUNTS


# ======================================================================================================
# c. a HEF whose NMS compiled: HAILO NMS BY CLASS -> the raw path's Detections
# ======================================================================================================


def hailort_nms_by_class(dets, num_classes, max_per_class=100, tail=-3.25):
    """HAILO_NMS_BY_CLASS as HailoRT writes it, from its documented layout (not the package's
    packer): per class a float32 count then count x [ymin, xmin, ymax, xmax, score] best first,
    classes back to back; the tail after the last box is left as it was (`tail`)."""
    buf = np.full(num_classes * (1 + 5 * max_per_class), tail, dtype=np.float32)
    pos = 0
    for k in range(num_classes):
        sel = np.flatnonzero(dets.class_ids == k)
        sel = sel[np.argsort(-dets.scores[sel], kind="stable")][:max_per_class]
        buf[pos] = len(sel)
        rows = np.concatenate([dets.boxes[sel], dets.scores[sel, None]], axis=1)
        buf[pos + 1:pos + 1 + 5 * len(sel)] = rows.reshape(-1)
        pos += 1 + 5 * len(sel)
    return buf


def _raw_case(name, uint8_data, float_data):
    if name == "yolo11n":
        cfg = hd.DecoderConfig(yolo11n_outputs(uint8_data), **LOGITS)
        return NET11, cfg, yolo11n_uint8(uint8_data)
    frames, quant = one_class_model(uint8_data, float_data)
    return NET1, hd.DecoderConfig.from_nms_json(json.loads(USER_JSON), one_class_outputs(quant, frames)), frames


@pytest.mark.parametrize("case", ["yolo11n", "one_class"])
def test_nms_hef_same_detections_as_raw(hp, uint8_data, float_data, case):
    net, cfg, raw = _raw_case(case, uint8_data, float_data)
    decoder = hd.Decoder(cfg)
    expected = decoder(raw)
    nc = cfg.num_classes
    assert sum(len(d) for d in expected) == (9 if case == "yolo11n" else sum(ONE_CLASS_COUNTS))
    bufs = [hailort_nms_by_class(d, nc) for d in expected]
    # The package's own packer writes the same layout (it zeroes the tail HailoRT leaves alone).
    for b, mine in zip(bufs, decoder.decode_to_hailo_nms(raw)):
        used = 0
        for _ in range(nc):
            used += 1 + 5 * int(b[used])
        np.testing.assert_array_equal(mine[:used], b[:used])
        assert not np.any(mine[used:])

    def same_sets(got):
        assert len(got) == N_FRAMES
        for g, e in zip(got, expected):
            assert isinstance(g, hd.Detections) and g.num_classes == nc
            assert _as_set(g) == _as_set(e)

    same_sets([hd.decode_hailo_nms(b, num_classes=nc) for b in bufs])  # the flat buffer itself
    same_sets(hd.decode_hailo_nms(np.stack(bufs), num_classes=nc))  # a batch of them

    fd = _fd()
    nms_name = f"{net}/yolov8_nms_postprocess"
    hidden = [fd.FakeOutput(o.name, o.shape, "uint8", o.order, o.zp, o.scale) for o in cfg.outputs]
    path = fd.register(fd.FakeModel(net, hidden, frames=[{nms_name: b} for b in bufs],
                                    nms=fd.FakeNms(nms_name, nc, 100)))
    ng, in_params, out_params = _vstreams(hp, path, hp.FormatType.FLOAT32)
    with pytest.raises(ValueError, match="decode_hailo_nms"):
        hd.DecoderConfig.from_hailo(ng)  # no raw layers to configure: they are already detections
    for tf in (False, True):
        fd.lookup(path).rewind()
        with hp.InferVStreams(ng, in_params, out_params, tf_nms_format=tf) as pipeline:
            out = pipeline.infer(_images(N_FRAMES))[nms_name]
        if tf:
            assert out.shape == (N_FRAMES, nc, 5, 100)
        same_sets(hd.decode_hailo_nms(out, num_classes=nc))
    fd.lookup(path).rewind()
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params) as outs:
        ins.get().send(_images(N_FRAMES))
        same_sets([hailort.decode_vstreams(None, outs) for _ in range(N_FRAMES)])
    fd.lookup(path).rewind()
    im = hp.VDevice().create_infer_model(path)
    with im.configure() as cim:
        hb = hailort.make_bindings(None, cim, batch_size=N_FRAMES,
                                   input_buffers={f"{net}/input_layer1": _images(N_FRAMES)})
        same_sets(hb.run(1000))
