"""SSD heads (HeadKind SSD) against HailoRT 4.23's ssd op transliterated from its source
(hailort_ssd_ops.py): the HAILO_NMS_BY_CLASS frame compared byte for byte (the op's std::sort ties
come from the compiled libstdc++ oracle, as for YOLOv8), uint8 and uint16, host and raw device
buffers, boxes crossing the border, the per-class cap reached; configured from the Model Zoo's
NMS JSON (mobilenet_ssd_nms_postprocess_config.json's form) and by hand."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import hailo_decode as hd
from hailort_anchor_ops import to_device_nhcw
from hailort_ssd_ops import ssd_frame_records, ssd_op

# The Model Zoo's ssd_mobilenet_v1 decoders (hailo_model_zoo/cfg/postprocess_config/
# mobilenet_ssd_nms_postprocess_config.json): six reg/cls pairs, 19x19 to 1x1 at 300x300.
ZOO_H = [
    [0.1, 0.1414213562373095, 0.282842712474619],
    [0.35, 0.2474873734152916, 0.4949747468305832, 0.20207259421636903, 0.6062480958117455, 0.4183300132670378],
    [0.5, 0.35355339059327373, 0.7071067811865475, 0.2886751345948129, 0.8660687083024937, 0.570087712549569],
    [0.65, 0.4596194077712559, 0.9192388155425117, 0.37527767497325676, 1.1258893207932419, 0.7211102550927979],
    [0.8, 0.565685424949238, 1.131370849898476, 0.46188021535170065, 1.38570993328399, 0.8717797887081347],
    [0.95, 0.67175144212722, 1.34350288425444, 0.5484827557301445, 1.645530545774738, 0.9746794344808963],
]
ZOO_W = [
    [0.1, 0.282842712474619, 0.1414213562373095],
    [0.35, 0.4949747468305833, 0.24748737341529164, 0.606217782649107, 0.20206249033405482, 0.4183300132670378],
    [0.5, 0.7071067811865476, 0.3535533905932738, 0.8660254037844386, 0.2886607004772212, 0.570087712549569],
    [0.65, 0.9192388155425119, 0.45961940777125593, 1.12583302491977, 0.3752589106203876, 0.7211102550927979],
    [0.8, 1.1313708498984762, 0.5656854249492381, 1.3856406460551018, 0.46185712076355395, 0.8717797887081347],
    [0.95, 1.3435028842544403, 0.6717514421272202, 1.6454482671904334, 0.5484553309067203, 0.9746794344808963],
]
GRIDS = [19, 10, 5, 3, 2, 1]
# reg layer names conv13 ... conv33 and cls conv14 ... conv34: std::map order (conv13 < conv17 <
# conv21 < conv25 < conv29 < conv33) is the list order here; the "z" names below reverse it.
REG = ["conv13", "conv17", "conv21", "conv25", "conv29", "conv33"]
CLS = ["conv14", "conv18", "conv22", "conv26", "conv30", "conv34"]


def zoo_json(*, score_th=0.3, iou_th=0.6, mpc=20, classes=91, background=True, bg_index=0, prefix="ssd/"):
    return {
        "nms_scores_th": score_th, "nms_iou_th": iou_th, "max_proposals_per_class": mpc,
        "centers_scale_factor": 10, "bbox_dimensions_scale_factor": 5, "image_dims": [300, 300],
        "classes": classes, "background_removal": background, "background_removal_index": bg_index,
        "bbox_decoders": [{"name": f"bbox_decoder{i}", "h": ZOO_H[i], "w": ZOO_W[i], "reg_layer": REG[i],
                           "cls_layer": CLS[i]} for i in range(6)],
    }


def ssd_case(rng, *, classes=91, dtype="uint8", device=False, hot=0.004, levels=None, names=None, cls_hot=None):
    """Random raw outputs of the six heads: class values mostly low, a few anchors' classes high;
    returns (outputs, raw, pairs, quant, anchors) for the Decoder and the op's reference."""
    top = 255 if dtype == "uint8" else 65535
    np_dtype = np.uint8 if dtype == "uint8" else np.uint16
    reg_names, cls_names = names or (REG, CLS)
    outputs, raw, pairs, quant, anchors = [], {}, {}, {}, {}
    for i, g in enumerate(GRIDS):
        a = len(ZOO_W[i])
        reg = rng.integers(0, top + 1, size=(g, g, 4 * a))
        cls = rng.integers(0, top // 4, size=(g, g, a * classes))
        hot_mask = rng.random((g, g, a * classes)) < hot
        cls = np.where(hot_mask, rng.integers(top // 4, top + 1, size=cls.shape), cls)
        if levels:  # few distinct values: many equal scores (ties for the op's sort)
            cls = (cls // (top // levels)) * (top // levels)
        if cls_hot is not None:
            cls = cls_hot(i, g, a, cls, top)
        reg, cls = reg.astype(np_dtype), cls.astype(np_dtype)
        rq = (float(top) / 2, 8.0 / top)  # regression values in [-4, 4]
        cq = (0.0, 1.0 / top)
        rn, cn = "ssd/" + reg_names[i], "ssd/" + cls_names[i]
        pairs[rn] = (cn, reg, cls)
        quant[rn], quant[cn] = rq, cq
        anchors[rn] = list(zip(ZOO_W[i], ZOO_H[i]))
        for name, x, (zp, scale) in ((rn, reg, rq), (cn, cls, cq)):
            if device:
                padded = (g, g + (8 - g % 8) % 8, x.shape[2])
                raw[name] = to_device_nhcw(x, padded)
                outputs.append(hd.OutputInfo(name, x.shape, dtype, "NHCW", zp=zp, scale=scale, padded_shape=padded,
                                             device=True))
            else:
                raw[name] = x
                outputs.append(hd.OutputInfo(name, x.shape, dtype, zp=zp, scale=scale))
    return outputs, raw, pairs, quant, anchors


def assert_frames_equal(got, want, classes, mpc):
    if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
        g, w = ssd_frame_records(got, classes, mpc), ssd_frame_records(want, classes, mpc)
        bad = [c for c in range(classes) if not np.array_equal(g[c], w[c])]
        c = bad[0] if bad else None
        raise AssertionError(f"frames differ: classes {bad[:10]}; class {c}: got {g.get(c)}, op {w.get(c)}")


def _op(pairs, quant, anchors, *, classes=91, background=0, th=0.3, iou=0.6, mpc=20):
    return ssd_op(pairs, quant, anchors, classes=classes, background=background, score_th=th, iou_th=iou,
                  max_per_class=mpc, centers_scale=10, dims_scale=5)


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("device", [False, True])
def test_ssd_from_model_zoo_json_is_hailorts_op(dtype, device):
    rng = np.random.default_rng(1 + 2 * device + (dtype == "uint16"))
    outputs, raw, pairs, quant, anchors = ssd_case(rng, dtype=dtype, device=device)
    cfg = hd.DecoderConfig.from_nms_json(zoo_json(), outputs)
    assert cfg.head_kind == "ssd" and cfg.num_classes == 90 and cfg.image_size == (300, 300)
    assert isinstance(cfg.heads[0], hd.SsdHead) and cfg.heads[0].background == 0
    got = hd.Decoder(cfg).decode_to_hailo_nms(raw)
    want = _op(pairs, quant, anchors)
    assert int(want.reshape(-1)[0]) >= 0
    assert (want != 0).sum() > 50  # detections in several classes
    assert_frames_equal(got, want, 90, 20)


def test_ssd_boxes_cross_the_border_unclipped():
    """The op never clips (normalize_boxes is always false): the 1x1 head's widest anchor (1.645)
    gives boxes reaching past both sides, kept as they are."""
    rng = np.random.default_rng(5)

    def hot_last(i, g, a, cls, top):
        cls = cls.copy()
        if i == 5:
            cls[..., 3 * 91 + 7] = top  # anchor 3 of the 1x1 head, class 7 (6 after the background)
        return cls

    outputs, raw, pairs, quant, anchors = ssd_case(rng, hot=0.0, cls_hot=hot_last)
    pairs["ssd/conv33"][1][...] = 127  # t = (127 - 127.5) * 8/255 ~ 0: the anchor itself
    cfg = hd.DecoderConfig.from_nms_json(zoo_json(), outputs)
    dets = hd.Decoder(cfg)(raw)
    assert len(dets) == 1 and dets.class_ids[0] == 6
    assert dets.boxes[0][1] < 0 and dets.boxes[0][3] > 1  # x_min < 0, x_max > 1: not clipped
    assert_frames_equal(hd.Decoder(cfg).decode_to_hailo_nms(raw), _op(pairs, quant, anchors), 90, 20)


def test_ssd_per_class_cap_and_ties():
    """Few distinct class values (many equal scores: the sort's ties) and a low threshold: classes
    reach max_proposals_per_class; the frame still equals the op's."""
    rng = np.random.default_rng(7)
    outputs, raw, pairs, quant, anchors = ssd_case(rng, classes=5, hot=0.2, levels=4)
    doc = zoo_json(classes=5, score_th=0.2, iou_th=0.5, mpc=3)
    cfg = hd.DecoderConfig.from_nms_json(doc, outputs)
    got = hd.Decoder(cfg).decode_to_hailo_nms(raw)
    want = _op(pairs, quant, anchors, classes=5, th=0.2, iou=0.5, mpc=3)
    counts = [int(want[k * 16]) if False else None for k in range(4)]  # (read below, record by record)
    recs = ssd_frame_records(want, 4, 3)
    assert all(len(recs[c]) == 3 for c in range(4)), counts  # every class at the cap
    assert_frames_equal(got, want, 4, 3)


@pytest.mark.parametrize("background", [-1, 4])
def test_ssd_background_last_or_none(background):
    rng = np.random.default_rng(11 + background)
    outputs, raw, pairs, quant, anchors = ssd_case(rng, classes=5, hot=0.05)
    doc = zoo_json(classes=5, background=background >= 0, bg_index=max(background, 0), score_th=0.4)
    cfg = hd.DecoderConfig.from_nms_json(doc, outputs)
    out = 5 if background < 0 else 4
    assert cfg.num_classes == out
    got = hd.Decoder(cfg).decode_to_hailo_nms(raw)
    want = _op(pairs, quant, anchors, classes=5, background=background, th=0.4)
    assert (want != 0).sum() > 20
    assert_frames_equal(got, want, out, 20)


def test_ssd_heads_visited_in_reg_name_order():
    """The op's reg_to_cls_inputs is a std::map: pairs in the order of the reg outputs' names, which
    its unstable sort's ties depend on. Names whose order reverses the list's give the op's frame."""
    rng = np.random.default_rng(3)
    names = (["z6", "z5", "z4", "z3", "z2", "z1"], ["c6", "c5", "c4", "c3", "c2", "c1"])
    outputs, raw, pairs, quant, anchors = ssd_case(rng, classes=3, hot=0.3, levels=3, names=names)
    doc = zoo_json(classes=3, score_th=0.2)
    for i, d in enumerate(doc["bbox_decoders"]):
        d["reg_layer"], d["cls_layer"] = names[0][i], names[1][i]
    cfg = hd.DecoderConfig.from_nms_json(doc, outputs)
    assert_frames_equal(hd.Decoder(cfg).decode_to_hailo_nms(raw), _op(pairs, quant, anchors, classes=3, th=0.2), 2, 20)


def test_ssd_float32_and_by_hand_heads_match_json():
    rng = np.random.default_rng(13)
    outputs, raw, pairs, quant, anchors = ssd_case(rng, classes=4, hot=0.1)
    cfg = hd.DecoderConfig.from_nms_json(zoo_json(classes=4), outputs)
    heads = [hd.SsdHead("ssd/" + REG[i], "ssd/" + CLS[i], list(zip(ZOO_W[i], ZOO_H[i])), background=0) for i in range(6)]
    by_hand = hd.DecoderConfig(outputs, heads, image_size=(300, 300), score_threshold=0.3, iou_threshold=0.6,
                               max_per_class=20)
    a, b = hd.Decoder(cfg)(raw), hd.Decoder(by_hand)(raw)
    np.testing.assert_array_equal(a.boxes, b.boxes)
    # float32 outputs holding the dequantized values: the same detections
    f_outputs = [hd.OutputInfo(o.name, o.shape, "float32") for o in outputs]
    f_raw = {n: ((x.astype(np.float32) - np.float32(quant[n][0])) * np.float32(quant[n][1])).astype(np.float32)
             for n, x in raw.items()}
    c = hd.Decoder(hd.DecoderConfig.from_nms_json(zoo_json(classes=4), f_outputs))(f_raw)
    np.testing.assert_array_equal(a.boxes, c.boxes)
    np.testing.assert_array_equal(a.scores, c.scores)
    assert len(a.scores) > 3
    assert "ssd" in repr(cfg) and cfg.replace(score_threshold=0.5).head_kind == "ssd"


def test_ssd_json_text_and_errors():
    rng = np.random.default_rng(0)
    outputs, raw, *_ = ssd_case(rng, classes=4, hot=0.0)
    cfg = hd.DecoderConfig.from_nms_json(json.dumps(zoo_json(classes=4)), outputs)
    assert cfg.num_classes == 3
    with pytest.raises(ValueError, match="says 91 classes.*conv14"):
        hd.DecoderConfig.from_nms_json(zoo_json(classes=91), outputs)
    with pytest.raises(ValueError, match="background_removal_index must be 0 or the last"):
        hd.DecoderConfig.from_nms_json(zoo_json(classes=4, bg_index=2), outputs)
    doc = zoo_json(classes=4)
    doc["bbox_decoders"][0]["w"] = doc["bbox_decoders"][0]["w"][:2]
    with pytest.raises(ValueError, match="anchor lists w and h"):
        hd.DecoderConfig.from_nms_json(doc, outputs)
    doc = zoo_json(classes=4)
    doc["bbox_decoders"][1]["h"] = [0.3, 0.2, 0.4, 0.5, 0.6]
    doc["bbox_decoders"][1]["w"] = [0.3, 0.2, 0.4, 0.5, 0.6]
    with pytest.raises(ValueError, match="conv17.*reg channels must be anchors x 4 = 5 x 4 = 20, got 24"):
        hd.DecoderConfig.from_nms_json(doc, outputs)
    doc = zoo_json(classes=4)
    doc["centre_scale_factor"] = 10
    with pytest.raises(TypeError, match="did you mean"):
        hd.DecoderConfig.from_nms_json(doc, outputs)
    heads = [hd.SsdHead("ssd/" + REG[i], "ssd/" + CLS[i], list(zip(ZOO_W[i], ZOO_H[i])), background=0) for i in range(6)]
    with pytest.raises(ValueError, match="image_size"):
        hd.DecoderConfig(outputs, heads)
    bad = list(heads)
    bad[2] = hd.SsdHead("ssd/" + REG[2], "ssd/" + CLS[2], list(zip(ZOO_W[2], ZOO_H[2])), background=0, dims_scale=4)
    with pytest.raises(ValueError, match="share one box coding"):
        hd.DecoderConfig(outputs, bad, image_size=(300, 300))
    with pytest.raises(ValueError, match="anchors must be finite and > 0"):
        hd.DecoderConfig(outputs, [hd.SsdHead(h.box, h.cls, [(0.1, -1.0)] * len(h.anchors), background=0)
                                   for h in heads], image_size=(300, 300))


# --------------------------------------------------------------------------------------------
# from_hef: the HEF's ssd op (ProtoHEFSSDNmsOp, written with tests/hef_writer.py's encoder)
# --------------------------------------------------------------------------------------------
def _ssd_hef(outputs, pads, *, classes=91, background=True, order=(0, 0, 0, 0)):
    import struct

    import hef_writer as w
    layers = [w.Layer("ssd/input_layer1", (300, 300, 3), output=False, limvals=(0.0, 255.0))]
    for o in outputs:
        layers.append(w.Layer(o.name, o.shape, "NHWC", data_bytes=1 if o.dtype == "uint8" else 2, zp=float(o.zp),
                              scale=float(o.scale), pad_index=pads[o.name]))
    decs = []
    for i in range(6):
        hs = struct.pack(f"<{len(ZOO_H[i])}f", *ZOO_H[i])
        ws = struct.pack(f"<{len(ZOO_W[i])}f", *ZOO_W[i])
        # ProtoHEFSSDBboxDecoder: h 1 (packed floats), w 2, reg_pad_index 3, cls_pad_index 4
        decs.append(w.msg(9, w.ln(1, hs), w.ln(2, ws), w.uint(3, pads["ssd/" + REG[i]], keep_zero=True),
                          w.uint(4, pads["ssd/" + CLS[i]], keep_zero=True)))
    # ProtoHEFSSDNmsOp: image_height 1, image_width 2, centers_scale_factor 3, bbox_dimensions_scale_factor 4,
    # ty 5, tx 6, th 7, tw 8, bbox_decoders 9
    ssd = w.msg(9, w.f64(1, 300.0), w.f64(2, 300.0), w.uint(3, 10), w.uint(4, 5),
                *[w.uint(5 + k, v) for k, v in enumerate(order)], *decs)
    nms = b"".join([w.f64(1, 0.3), w.f64(2, 0.6), w.uint(3, 20), w.uint(4, classes), w.uint(5, int(background)),
                    w.uint(6, 0), ssd])
    op = b"".join([w.string(1, "ssd_nms_postprocess"), w.msg(3, w.pad(1000, "ssd/ssd_nms")), w.msg(5, nms)])
    group = w.network_group("ssd", layers) + w.msg(8, op)
    return w.wrap(w.hef_proto([group], extensions=(0, 3, 12, 13, 16)))


def test_from_hef_reads_the_ssd_op(tmp_path):
    rng = np.random.default_rng(23)
    outputs, raw, pairs, quant, anchors = ssd_case(rng)
    pads = {o.name: 10 + k for k, o in enumerate(outputs)}
    p = tmp_path / "ssd.hef"
    p.write_bytes(_ssd_hef(outputs, pads))
    op = hd.read_hef(str(p)).network_groups[0].anchor_op
    assert op is not None and op.kind == "ssd" and op.ssd_coding == (10.0, 5.0, 0, 1, 2, 3) and op.background == 0
    assert op.decoders[0].anchors[1] == (np.float32(ZOO_W[0][1]), np.float32(ZOO_H[0][1]))
    cfg = hd.DecoderConfig.from_hef(str(p))
    assert cfg.head_kind == "ssd" and cfg.num_classes == 90 and cfg.image_size == (300, 300)
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class) == (np.float32(0.3), np.float32(0.6), 20)
    assert cfg.class_activation == "none"
    got = hd.Decoder(cfg).decode_to_hailo_nms(raw)
    assert_frames_equal(got, _op(pairs, quant, anchors), 90, 20)
    # the HEF's regression order (ty, tx, th, tw) = (1, 0, 3, 2): x and y, w and h swapped
    p.write_bytes(_ssd_hef(outputs, pads, order=(1, 0, 3, 2)))
    cfg2 = hd.DecoderConfig.from_hef(str(p))
    assert cfg2.heads[0].reg_order == "xywh"
    want = ssd_op(pairs, quant, anchors, classes=91, background=0, score_th=0.3, iou_th=0.6, max_per_class=20,
                  centers_scale=10, dims_scale=5, reg_index=(0, 1, 2, 3))
    assert_frames_equal(hd.Decoder(cfg2).decode_to_hailo_nms(raw), want, 90, 20)


def test_ssd_class_value_equal_to_the_threshold_passes():
    """`class_score < nms_score_th` is skipped: a value equal to the threshold is a detection."""
    rng = np.random.default_rng(17)

    def exact(i, g, a, cls, top):
        cls = np.minimum(cls, 150)
        cls[rng.random(cls.shape) < 0.02] = 200
        return cls

    outputs, raw, pairs, quant, anchors = ssd_case(rng, classes=4, cls_hot=exact)
    th = float(np.float32(200) * np.float32(1 / 255))  # the dequantized value of code 200, exactly
    cfg = hd.DecoderConfig.from_nms_json(zoo_json(classes=4, score_th=th), outputs)
    got = hd.Decoder(cfg).decode_to_hailo_nms(raw)
    want = _op(pairs, quant, anchors, classes=4, th=th)
    assert (want != 0).sum() > 20
    assert_frames_equal(got, want, 3, 20)


def test_ssd_equals_hailorts_own_op_compiled_from_its_source(tmp_path):
    """HailoRT 4.23's ssd_post_process.cpp and nms_post_process.cpp themselves, built with
    benchmarks/hailort_op's driver and logger stubs (test-only, never in the package), on frames
    with many equal scores: the same HAILO_NMS_BY_CLASS bytes."""
    import os
    import shutil
    import sys
    from pathlib import Path
    src = Path(os.environ.get("HAILO_DECODE_HAILORT_SRC") or Path(__file__).resolve().parents[2] / "shared" /
               "hailort-src") / "v4.23.0"
    if not (src / "hailort" / "libhailort" / "src" / "net_flow" / "ops" / "ssd_post_process.cpp").exists() or \
            not shutil.which("g++"):
        pytest.skip(f"HailoRT 4.23's source ({src}) or g++ is not at hand")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import ssd_bench
    binary = str(tmp_path / "ssd_op")
    ssd_bench.build(src, binary)
    outputs = [hd.OutputInfo("ssd/" + REG[i], (g, g, 4 * len(ZOO_W[i])), "uint8", zp=ssd_bench.RZP, scale=ssd_bench.RSCALE)
               for i, g in enumerate(GRIDS)]
    outputs += [hd.OutputInfo("ssd/" + CLS[i], (g, g, 91 * len(ZOO_W[i])), "uint8", zp=ssd_bench.CZP,
                              scale=ssd_bench.CSCALE) for i, g in enumerate(GRIDS)]
    dec = hd.Decoder(hd.DecoderConfig.from_nms_json(zoo_json(), outputs))
    rng = np.random.default_rng(4)
    for objects in (0, 30, 400):  # 400: classes at the cap of 20, equal scores everywhere
        outs = ssd_bench.make_case(rng, objects)
        if objects == 400:
            for name in outs:
                if any(name.endswith(c) for c in CLS):
                    outs[name] = np.where(outs[name] >= 120, np.uint8(200), outs[name])
        ssd_bench.write_case(str(tmp_path), outs)
        subprocess.run([binary, str(tmp_path), "1"], check=True, capture_output=True)
        want = np.fromfile(tmp_path / "frame.bin", np.float32)
        got = dec.decode_to_hailo_nms(outs)
        assert_frames_equal(got, want, 90, 20)
        if objects == 400:
            assert max(len(r) for r in ssd_frame_records(want, 90, 20).values()) == 20


def test_inspect_shows_the_ssd_op_and_heads(tmp_path, capsys):
    """`hailo-decode inspect` on a HEF with an ssd op: its decoders (cls layer, anchors) and the SSD
    heads (no stride) are printed, not a crash on the missing stride."""
    from hailo_decode.cli import main
    outputs, *_ = ssd_case(np.random.default_rng(2))
    p = tmp_path / "ssd.hef"
    p.write_bytes(_ssd_hef(outputs, {o.name: 10 + k for k, o in enumerate(outputs)}))
    assert main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert "Op SSD" in out and "cls ssd/conv14, anchors (w, h) [[0.1, 0.1]" in out
    assert "90 classes, ssd heads" in out and "stride   -: box ssd/conv13, cls ssd/conv14" in out
