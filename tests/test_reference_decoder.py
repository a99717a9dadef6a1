"""Tests of the NumPy reference decoder itself (hand-computed tiny cases) and of
the random case generator. The fast implementation is tested elsewhere against
``reference_decoder.reference_decode``."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import random_cases as rc  # noqa: E402
import reference_decoder as ref  # noqa: E402


# --------------------------------------------------------------------------
# Helpers for hand-made cases
# --------------------------------------------------------------------------

def host_info(shape, dtype="uint8", zp=0.0, scale=0.25, order="NHWC"):
    return {"shape": tuple(shape), "dtype": dtype, "layout": "host", "order": order,
            "padded_shape": None, "zp": zp, "scale": scale}


def one_head_spec(box_info, cls_info, stride, image_size, **kw):
    spec = {
        "heads": [{"box": "box", "cls": "cls", "stride": stride}],
        "outputs": {"box": box_info, "cls": cls_info},
        "image_size": image_size,
        "activation": "none",
        "score_threshold": 0.5,
        "score_test": ">=",
        "multi_label": True,
        "iou_threshold": 0.5,
        "iou_test": ">=",
        "agnostic": False,
        "tie_break": "stable",
        "max_candidates": None,
        "max_per_class": None,
        "max_total": None,
        "normalized": False,
        "box_order": "xyxy",
    }
    spec.update(kw)
    return spec


def grid2x2_case(**kw):
    """1 class, image 32x32, stride 16 -> 2x2 grid; bins R = 1 (direct distances).

    Distances and scores are uint8 with zp 0, scale 0.25 (all exact):

      cell   score  (l, t, r, b)          centre   box (x1, y1, x2, y2)
      (0,0)  1.00   (0.5, 0.5, 0.5, 0.5)  (8, 8)   (0, 0, 16, 16)     area 256
      (0,1)  0.50   (1.0, 0.5, 2.0, 1.0)  (24, 8)  (8, 0, 56, 24)     area 1152
      (1,0)  0.75   (0.5, 1.0, 0.5, 0.5)  (8, 24)  (0, 8, 16, 32)     area 384
      (1,1)  0.25   (.25, .25, .25, .25)  (24, 24) (20, 20, 28, 28)

    IoU (0,0)-(1,0) = 128 / 512 = 0.25 exactly; (0,0)-(0,1) = 128/1280 = 0.1;
    (1,0)-(0,1) = 128/1408.
    """
    box = np.array([[[2, 2, 2, 2], [4, 2, 8, 4]],
                    [[2, 4, 2, 2], [1, 1, 1, 1]]], dtype=np.uint8)
    cls = np.array([[[4], [2]], [[3], [1]]], dtype=np.uint8)
    spec = one_head_spec(host_info((2, 2, 4)), host_info((2, 2, 1)), 16, (32, 32), **kw)
    return {"box": box, "cls": cls}, spec


BOX_00 = [0, 0, 16, 16]
BOX_01 = [8, 0, 56, 24]
BOX_10 = [0, 8, 16, 32]
BOX_11 = [20, 20, 28, 28]


def multiclass_cell_case(scores_q, **kw):
    """One cell (image 16x16, stride 16), K classes with the given uint8 score
    codes (scale 0.25), box (0.5, 0.5, 0.5, 0.5) -> (0, 0, 16, 16)."""
    K = len(scores_q)
    box = np.full((1, 1, 4), 2, dtype=np.uint8)
    cls = np.array(scores_q, dtype=np.uint8).reshape(1, 1, K)
    spec = one_head_spec(host_info((1, 1, 4)), host_info((1, 1, K)), 16, (16, 16), **kw)
    return {"box": box, "cls": cls}, spec


# --------------------------------------------------------------------------
# The hand-computed 2x2 grid
# --------------------------------------------------------------------------

def test_grid2x2_boxes_scores_and_order():
    outputs, spec = grid2x2_case(score_threshold=0.5, iou_threshold=0.5)
    boxes, scores, classes = ref.reference_decode(outputs, spec)
    assert boxes.dtype == np.float32 and scores.dtype == np.float32 and classes.dtype == np.int64
    np.testing.assert_array_equal(boxes, np.array([BOX_00, BOX_10, BOX_01], np.float32))
    np.testing.assert_array_equal(scores, np.array([1.0, 0.75, 0.5], np.float32))
    np.testing.assert_array_equal(classes, [0, 0, 0])


def test_grid2x2_all_cells_low_threshold():
    outputs, spec = grid2x2_case(score_threshold=0.0, iou_threshold=0.9)
    boxes, scores, _ = ref.reference_decode(outputs, spec)
    np.testing.assert_array_equal(boxes, np.array([BOX_00, BOX_10, BOX_01, BOX_11], np.float32))
    np.testing.assert_array_equal(scores, np.array([1.0, 0.75, 0.5, 0.25], np.float32))


def test_score_test_ge_vs_gt_on_exact_threshold():
    outputs, spec = grid2x2_case(score_threshold=0.5, score_test=">=")
    assert ref.reference_decode(outputs, spec)[1].tolist() == [1.0, 0.75, 0.5]
    outputs, spec = grid2x2_case(score_threshold=0.5, score_test=">")
    assert ref.reference_decode(outputs, spec)[1].tolist() == [1.0, 0.75]


def test_iou_test_ge_vs_gt_on_exact_iou():
    # IoU((0,0), (1,0)) is exactly 0.25.
    outputs, spec = grid2x2_case(iou_threshold=0.25, iou_test=">=")
    boxes, scores, _ = ref.reference_decode(outputs, spec)
    np.testing.assert_array_equal(boxes, np.array([BOX_00, BOX_01], np.float32))
    outputs, spec = grid2x2_case(iou_threshold=0.25, iou_test=">")
    boxes, _, _ = ref.reference_decode(outputs, spec)
    np.testing.assert_array_equal(boxes, np.array([BOX_00, BOX_10, BOX_01], np.float32))


def test_iou32_hand_values():
    b00 = np.array(BOX_00, np.float32)
    others = np.array([BOX_10, BOX_01, BOX_11, [16, 0, 32, 16], [0, 16, 16, 32], BOX_00,
                       [4, 20, 12, 28], [20, 4, 28, 12]], np.float32)
    # BOX_11: overlap width and height both negative (their product is positive!);
    # the last two: one overlap extent positive, the other negative; touching: 0.
    iou = ref.iou32(b00, others)
    assert iou.dtype == np.float32
    np.testing.assert_array_equal(iou, np.float32([0.25, 128 / 1280, 0, 0, 0, 1, 0, 0]))
    # touching boxes (overlap width 0) -> 0; a box inside another
    assert ref.iou32(np.float32([0, 0, 4, 4]), np.float32([[1, 1, 3, 3]]))[0] == np.float32(0.25)


def test_normalized_and_yxyx():
    outputs, spec = grid2x2_case(normalized=True, box_order="yxyx")
    boxes, _, _ = ref.reference_decode(outputs, spec)
    expected = np.array([[0, 0, 16, 16], [8, 0, 32, 16], [0, 8, 24, 56]], np.float32) / np.float32(32)
    np.testing.assert_array_equal(boxes, expected)


def test_normalized_uses_height_for_y_and_width_for_x():
    # image 32 (H) x 64 (W), stride 16 -> grid 2x4; one cell (0,0) passes
    box = np.full((2, 4, 4), 2, np.uint8)  # 0.5 each side
    cls = np.zeros((2, 4, 1), np.uint8)
    cls[0, 0, 0] = 4
    spec = one_head_spec(host_info((2, 4, 4)), host_info((2, 4, 1)), 16, (32, 64), normalized=True)
    boxes, _, _ = ref.reference_decode({"box": box, "cls": cls}, spec)
    np.testing.assert_array_equal(boxes, np.float32([[0 / 64, 0 / 32, 16 / 64, 16 / 32]]))


def test_caps_before_and_after_nms():
    # max_candidates=2 keeps (0,0) and (1,0) BEFORE NMS; (1,0) is then suppressed.
    outputs, spec = grid2x2_case(iou_threshold=0.25, max_candidates=2)
    boxes, _, _ = ref.reference_decode(outputs, spec)
    np.testing.assert_array_equal(boxes, np.array([BOX_00], np.float32))
    # max_total=2 applies AFTER NMS: (0,0) and (0,1) survive.
    outputs, spec = grid2x2_case(iou_threshold=0.25, max_total=2)
    boxes, _, _ = ref.reference_decode(outputs, spec)
    np.testing.assert_array_equal(boxes, np.array([BOX_00, BOX_01], np.float32))
    outputs, spec = grid2x2_case(iou_threshold=0.5, max_per_class=1)
    boxes, _, _ = ref.reference_decode(outputs, spec)
    np.testing.assert_array_equal(boxes, np.array([BOX_00], np.float32))


def test_max_per_class_then_max_total():
    # one cell, classes with scores 1.0, 0.75, 0.5 -> identical boxes, class-aware
    # NMS keeps all three; per-class cap 1 keeps all three; total cap 2 keeps two.
    outputs, spec = multiclass_cell_case([4, 3, 2], score_threshold=0.25, max_per_class=1, max_total=2)
    _, scores, classes = ref.reference_decode(outputs, spec)
    assert classes.tolist() == [0, 1]
    assert scores.tolist() == [1.0, 0.75]


def test_max_per_class_keeps_highest_scores():
    # 2x2 grid case: all four cells pass, class 0 only; cap 2 keeps the 2 best.
    outputs, spec = grid2x2_case(score_threshold=0.0, iou_threshold=0.9, max_per_class=2)
    _, scores, _ = ref.reference_decode(outputs, spec)
    assert scores.tolist() == [1.0, 0.75]


# --------------------------------------------------------------------------
# multi_label, best class, agnostic
# --------------------------------------------------------------------------

def test_multi_label_vs_best_class():
    outputs, spec = multiclass_cell_case([3, 3, 2], score_threshold=0.5, multi_label=True)
    _, scores, classes = ref.reference_decode(outputs, spec)
    assert classes.tolist() == [0, 1, 2] and scores.tolist() == [0.75, 0.75, 0.5]
    outputs, spec = multiclass_cell_case([3, 3, 2], score_threshold=0.5, multi_label=False)
    _, scores, classes = ref.reference_decode(outputs, spec)
    assert classes.tolist() == [0] and scores.tolist() == [0.75]  # tie -> lowest class


def test_best_class_tie_picks_lowest_index_even_if_later():
    outputs, spec = multiclass_cell_case([1, 3, 0, 3], score_threshold=0.5, multi_label=False)
    _, _, classes = ref.reference_decode(outputs, spec)
    assert classes.tolist() == [1]


def test_best_class_uses_its_own_per_class_threshold():
    th = np.float32([1.0, 0.25, 0.25])
    outputs, spec = multiclass_cell_case([3, 2, 2], score_threshold=th, multi_label=False)
    assert len(ref.reference_decode(outputs, spec)[1]) == 0  # best class 0 fails 1.0
    outputs, spec = multiclass_cell_case([3, 2, 2], score_threshold=th, multi_label=True)
    assert ref.reference_decode(outputs, spec)[2].tolist() == [1, 2]


def test_agnostic_vs_class_aware():
    outputs, spec = multiclass_cell_case([4, 3, 2], score_threshold=0.25, agnostic=False,
                                         iou_threshold=0.5)
    assert ref.reference_decode(outputs, spec)[2].tolist() == [0, 1, 2]
    outputs, spec = multiclass_cell_case([4, 3, 2], score_threshold=0.25, agnostic=True,
                                         iou_threshold=0.5)
    assert ref.reference_decode(outputs, spec)[2].tolist() == [0]


def test_identical_boxes_iou_exactly_one():
    # agnostic with iou_threshold 1.0: ">=" suppresses the identical boxes, ">" does not
    outputs, spec = multiclass_cell_case([4, 3], score_threshold=0.25, agnostic=True,
                                         iou_threshold=1.0, iou_test=">=")
    assert ref.reference_decode(outputs, spec)[2].tolist() == [0]
    outputs, spec = multiclass_cell_case([4, 3], score_threshold=0.25, agnostic=True,
                                         iou_threshold=1.0, iou_test=">")
    assert ref.reference_decode(outputs, spec)[2].tolist() == [0, 1]


def test_candidate_order_heads_row_col_class():
    # two heads (given in stride order 16, 8), every score equal, disjoint boxes,
    # stable tie-break -> output order is exactly the candidate order.
    img = (32, 32)
    outputs, infos, heads = {}, {}, []
    for s in (16, 8):
        g = 32 // s
        outputs[f"b{s}"] = np.ones((g, g, 4), np.uint8)  # 0.25 stride each side
        outputs[f"c{s}"] = np.full((g, g, 2), 2, np.uint8)
        infos[f"b{s}"] = host_info((g, g, 4))
        infos[f"c{s}"] = host_info((g, g, 2))
        heads.append({"box": f"b{s}", "cls": f"c{s}", "stride": s})
    spec = one_head_spec(None, None, 1, img, heads=heads, outputs=infos, score_threshold=0.5,
                         agnostic=False)
    boxes, scores, classes = ref.reference_decode(outputs, spec)
    expected = []
    for s in (16, 8):
        g = 32 // s
        for r in range(g):
            for c in range(g):
                cx, cy = (c + 0.5) * s, (r + 0.5) * s
                for k in range(2):
                    expected.append(([cx - s / 4, cy - s / 4, cx + s / 4, cy + s / 4], k))
    np.testing.assert_array_equal(boxes, np.float32([e[0] for e in expected]))
    assert classes.tolist() == [e[1] for e in expected]
    assert np.all(scores == np.float32(0.5))
    cand = ref.decode_candidates(outputs, spec)
    assert cand["head"].tolist() == [0] * 8 + [1] * 32


# --------------------------------------------------------------------------
# Layouts
# --------------------------------------------------------------------------

def test_device_index_formulas_hand_values():
    # (H, W, C) = (2, 3, 13), padded (3, 4, 16); element (h=1, w=2, c=11)
    #   NHWC/FCR: 1*4*16 + 2*16 + 11      = 107
    #   NHCW:     1*4*16 + 11*4 + 2        = 110
    #   F8CR:     1*4*16 + 8*4 + 2*8 + 3   = 115
    # element (h=0, w=1, c=2): NHWC 18, NHCW 9, F8CR 10
    expected = {"NHWC": (107, 18), "FCR": (107, 18), "NHCW": (110, 9), "F8CR": (115, 10)}
    for order, (i1, i2) in expected.items():
        buf = np.full(3 * 4 * 16, 7, dtype=np.uint8)
        buf[i1] = 200
        buf[i2] = 100
        info = {"shape": (2, 3, 13), "dtype": "uint8", "layout": "device", "order": order,
                "padded_shape": (3, 4, 16), "zp": 0.0, "scale": 1.0}
        logical = ref.logical_raw(buf, info)
        assert logical.shape == (2, 3, 13)
        assert logical[1, 2, 11] == 200, order
        assert logical[0, 1, 2] == 100, order
        assert np.count_nonzero(logical == 7) == 2 * 3 * 13 - 2, order


def _independent_device_buffer(logical, padded, order, fill):
    """Padded device buffer built with numpy pads/transposes (not the formulas)."""
    H, W, C = logical.shape
    Hp, Wp, Cp = padded
    if order in ("NHWC", "FCR"):
        P = np.full((Hp, Wp, Cp), fill, logical.dtype)
        P[:H, :W, :C] = logical
    elif order == "NHCW":
        P = np.full((Hp, Cp, Wp), fill, logical.dtype)
        P[:H, :C, :W] = logical.transpose(0, 2, 1)
    else:  # F8CR: [h][channel group][w][8]
        Lp = np.full((H, W, Cp), fill, logical.dtype)
        Lp[:, :, :C] = logical
        P = np.full((Hp, Cp // 8, Wp, 8), fill, logical.dtype)
        P[:H, :, :W, :] = Lp.reshape(H, W, Cp // 8, 8).transpose(0, 2, 1, 3)
    return P.reshape(-1)


@pytest.mark.parametrize("order", ["NHWC", "FCR", "NHCW", "F8CR"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
def test_device_layout_roundtrip(order, dtype):
    rng = np.random.default_rng(5)
    H, W, C = 3, 5, 11
    padded = (4, 7, 16)
    if dtype == "float32":
        logical = rng.uniform(-5, 5, size=(H, W, C)).astype(np.float32)
        fill = np.float32(1e6)
    else:
        logical = rng.integers(0, 200, size=(H, W, C)).astype(dtype)
        fill = np.iinfo(dtype).max
    buf = _independent_device_buffer(logical, padded, order, fill)
    buf = np.concatenate([buf, np.full(5, fill, buf.dtype)])  # longer than needed is fine
    info = {"shape": (H, W, C), "dtype": dtype, "layout": "device", "order": order,
            "padded_shape": padded, "zp": 0.0, "scale": 1.0}
    np.testing.assert_array_equal(ref.logical_raw(buf, info), logical)


@pytest.mark.parametrize("order", ["NHWC", "FCR", "F8CR", "NCHW"])
@pytest.mark.parametrize("flat", [False, True])
def test_host_layouts(order, flat):
    logical = np.arange(2 * 3 * 5, dtype=np.uint16).reshape(2, 3, 5)
    arr = logical.transpose(2, 0, 1).copy() if order == "NCHW" else logical.copy()
    if flat:
        arr = arr.reshape(-1)
    info = {"shape": (2, 3, 5), "dtype": "uint16", "layout": "host", "order": order,
            "padded_shape": None, "zp": 0.0, "scale": 1.0}
    np.testing.assert_array_equal(ref.logical_raw(arr, info), logical)
    # hand value for element (h=0, w=1, c=3): NCHW c*H*W + h*W + w = 19, dense h*W*C + w*C + c = 8
    flat_arr = arr.reshape(-1)
    idx = 3 * 6 + 0 * 3 + 1 if order == "NCHW" else 0 * 15 + 1 * 5 + 3
    assert flat_arr[idx] == logical[0, 1, 3]


def test_dtype_mismatch_is_rejected():
    info = host_info((1, 1, 4), dtype="uint16")
    with pytest.raises(TypeError):
        ref.logical_raw(np.zeros((1, 1, 4), np.uint8), info)


def test_padding_is_never_read_by_decode():
    rng = np.random.default_rng(11)
    for _ in range(20):
        outputs, spec = rc.make_case(rng, layout="device", dtype=("uint8", "uint16", "float32"),
                                     per_channel=rc.RANDOM, activation=rc.RANDOM,
                                     num_classes=rc.RANDOM, bins=rc.RANDOM)
        base = ref.reference_decode(outputs, spec)
        for fill in ("zero", "max"):
            changed = {}
            for name, arr in outputs.items():
                mask = rc.padding_mask(spec, name, arr.size)
                a = arr.copy()
                if a.dtype == np.float32:
                    a[mask] = 0 if fill == "zero" else np.float32(-1e30)
                else:
                    a[mask] = 0 if fill == "zero" else np.iinfo(a.dtype).max
                changed[name] = a
            other = ref.reference_decode(changed, spec)
            for x, y in zip(base, other):
                np.testing.assert_array_equal(x, y)


# --------------------------------------------------------------------------
# Quantization, activation, DFL
# --------------------------------------------------------------------------

def test_dequantize_is_float32_formula():
    q = np.array([[[0, 3, 255]]], np.uint8)
    info = host_info((1, 1, 3), zp=1.5, scale=0.1)
    out = ref.dequantize(q, info)
    assert out.dtype == np.float32
    expected = [(np.float32(v) - np.float32(1.5)) * np.float32(0.1) for v in (0, 3, 255)]
    np.testing.assert_array_equal(out[0, 0], np.float32(expected))


def test_dequantize_per_channel():
    q = np.array([[[10, 10, 10]], [[20, 20, 20]]], np.uint16)  # (2, 1, 3)
    info = host_info((2, 1, 3), dtype="uint16", zp=np.float32([0, 5, 10]),
                     scale=np.float32([1.0, 0.5, 0.25]))
    out = ref.dequantize(q, info)
    np.testing.assert_array_equal(out[0, 0], np.float32([10, 2.5, 0]))
    np.testing.assert_array_equal(out[1, 0], np.float32([20, 7.5, 2.5]))


def test_float32_ignores_zp_and_scale():
    x = np.float32([[[0.1, -2.0, 3.5]]])
    info = host_info((1, 1, 3), dtype="float32", zp=100.0, scale=7.0)
    np.testing.assert_array_equal(ref.logical_float(x, info), x)


def test_per_channel_quantization_changes_which_class_passes():
    # same code 2 in both classes; class 1 has scale 0.5 -> 1.0, class 0 scale 0.125 -> 0.25
    outputs, spec = multiclass_cell_case([2, 2], score_threshold=0.5)
    spec["outputs"]["cls"]["scale"] = np.float32([0.125, 0.5])
    spec["outputs"]["cls"]["zp"] = np.float32([0, 0])
    _, scores, classes = ref.reference_decode(outputs, spec)
    assert classes.tolist() == [1] and scores.tolist() == [1.0]


def test_uint8_score_at_threshold_0_2_passes():
    # 51 * float32(1/255) is float32(0.2) or just above: ">=" at 0.2 passes.
    outputs, spec = multiclass_cell_case([51], score_threshold=0.2)
    spec["outputs"]["cls"]["scale"] = float(np.float32(1 / 255))
    assert len(ref.reference_decode(outputs, spec)[1]) == 1


def test_sigmoid_activation():
    x = np.float32([-3.0, 0.0, math.log(3.0), 20.0, -100.0])
    s = ref.sigmoid32(x)
    assert s.dtype == np.float32
    exact = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(s, exact, rtol=2e-7, atol=1e-30)
    # decode: logits 0 (0.5) and log 3 (0.75) with threshold 0.6 -> only class 1
    box = np.full((1, 1, 4), 0.5, np.float32)
    cls = np.float32([[[0.0, math.log(3.0)]]])
    spec = one_head_spec(host_info((1, 1, 4), dtype="float32"), host_info((1, 1, 2), dtype="float32"),
                         16, (16, 16), activation="sigmoid", score_threshold=0.6)
    _, scores, classes = ref.reference_decode({"box": box, "cls": cls}, spec)
    assert classes.tolist() == [1]
    assert abs(float(scores[0]) - 0.75) < 1e-7


def _dfl_by_hand(logits):
    """sum(i * exp(x_i)) / sum(exp(x_j)) with Python floats."""
    den = sum(math.exp(v) for v in logits)
    return sum(i * math.exp(v) for i, v in enumerate(logits)) / den


def test_dfl_hand_values():
    box = np.zeros((1, 1, 16), np.float32)
    box[0, 0, 0:4] = [0, 0, 0, 0]            # uniform -> 1.5
    box[0, 0, 4:8] = [0, 0, -100, -100]      # half/half on bins 0, 1 -> 0.5
    box[0, 0, 8:12] = [-100, -100, -100, 0]  # all on bin 3 -> 3
    box[0, 0, 12:16] = [1, 2, 3, 4]
    d = ref.dfl_distances(box)
    assert d.dtype == np.float32
    np.testing.assert_allclose(d[0, 0], [1.5, 0.5, 3.0, _dfl_by_hand([1, 2, 3, 4])], rtol=1e-6)


def test_dfl_random_vs_python_loops():
    rng = np.random.default_rng(3)
    for R in (2, 8, 16):
        box = rng.normal(0, 4, size=(2, 3, 4 * R)).astype(np.float32)
        d = ref.dfl_distances(box)
        for h in range(2):
            for w in range(3):
                for side in range(4):
                    v = [float(x) for x in box[h, w, side * R:(side + 1) * R]]
                    assert abs(float(d[h, w, side]) - _dfl_by_hand(v)) <= 1e-6 * max(1, R)


def test_dfl_r1_is_identity():
    box = np.float32([[[0.5, 1.25, -0.5, 3.0]]])
    np.testing.assert_array_equal(ref.dfl_distances(box)[0, 0], box[0, 0])


def test_box_from_dfl_in_decode():
    # R = 4 float32 box logits, uniform on every side -> distance 1.5 stride.
    # stride 8, cell (row 1, col 0) of a 2x2 grid: centre (4, 12) -> (-8, 0, 16, 24)
    box = np.zeros((2, 2, 16), np.float32)
    cls = np.zeros((2, 2, 1), np.float32)
    cls[1, 0, 0] = 0.9
    spec = one_head_spec(host_info((2, 2, 16), dtype="float32"), host_info((2, 2, 1), dtype="float32"),
                         8, (16, 16), score_threshold=0.5)
    boxes, scores, _ = ref.reference_decode({"box": box, "cls": cls}, spec)
    np.testing.assert_allclose(boxes, [[-8, 0, 16, 24]], atol=1e-5)
    assert scores.tolist() == [np.float32(0.9)]


# --------------------------------------------------------------------------
# Sorting and the std::sort oracle
# --------------------------------------------------------------------------

def test_oracle_is_valid_and_permutes_ties():
    scores = np.float32([0.5] * 20 + [0.25] * 10 + [0.75] * 10)
    perm = ref.hailort_sort_permutation(scores)
    assert sorted(perm.tolist()) == list(range(40))
    assert np.all(np.diff(scores[perm]) <= 0)
    stable = ref.sort_order(scores, "stable")
    assert np.array_equal(scores[perm], scores[stable])
    assert not np.array_equal(perm, stable)  # libstdc++ introsort reorders ties


def test_oracle_small_inputs_are_insertion_sorted():
    # libstdc++ sorts ranges of <= 16 elements with insertion sort (stable)
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 5, 16):
        scores = rng.choice(np.float32([0.1, 0.2, 0.3]), size=n).astype(np.float32)
        assert ref.hailort_sort_permutation(scores).tolist() == ref.sort_order(scores, "stable").tolist()


def test_oracle_without_ties_equals_stable():
    rng = np.random.default_rng(1)
    scores = rng.permutation(np.arange(500, dtype=np.float32) / 500)
    assert ref.hailort_sort_permutation(scores).tolist() == ref.sort_order(scores, "stable").tolist()


def test_stable_sort_keeps_candidate_order_for_ties():
    scores = np.float32([0.5, 0.7, 0.5, 0.7, 0.1])
    assert ref.sort_order(scores, "stable").tolist() == [1, 3, 0, 2, 4]


def test_tie_break_decides_the_survivor():
    # 64 cells of one class, all with the same score and heavily overlapping boxes:
    # only the first box in sorted order survives NMS.
    g = 8
    box = np.full((g, g, 4), 200, np.uint8)  # 50 strides each side: all boxes nearly coincide
    cls = np.full((g, g, 1), 2, np.uint8)
    spec = one_head_spec(host_info((g, g, 4)), host_info((g, g, 1)), 8, (64, 64),
                         score_threshold=0.5, iou_threshold=0.5)
    outputs = {"box": box, "cls": cls}
    cand = ref.decode_candidates(outputs, spec)
    perm = ref.hailort_sort_permutation(cand["scores"])
    assert perm[0] != 0

    boxes_stable, _, _ = ref.reference_decode(outputs, {**spec, "tie_break": "stable"})
    boxes_hailort, _, _ = ref.reference_decode(outputs, {**spec, "tie_break": "hailort"})
    np.testing.assert_array_equal(boxes_stable, cand["boxes"][[0]])
    np.testing.assert_array_equal(boxes_hailort, cand["boxes"][[perm[0]]])
    assert not np.array_equal(boxes_stable, boxes_hailort)


# --------------------------------------------------------------------------
# The random case generator
# --------------------------------------------------------------------------

GEN_OPTIONS = [
    dict(dtype="uint8", layout="host", activation="none"),
    dict(dtype="uint16", layout="device", activation="sigmoid", per_channel=True),
    dict(dtype="float32", layout="host", activation="sigmoid", bins=1),
    dict(dtype=rc.RANDOM, layout=rc.RANDOM, order=rc.RANDOM, per_channel=rc.RANDOM,
         num_classes=rc.RANDOM, bins=rc.RANDOM, activation=rc.RANDOM),
]


@pytest.mark.parametrize("options", GEN_OPTIONS)
def test_random_cases_are_well_formed_and_robust(options):
    rng = np.random.default_rng(42)
    for _ in range(15):
        outputs, spec = rc.make_case(rng, **options)
        assert rc.case_problems(outputs, spec) == []
        assert 1 <= len(spec["heads"]) <= 3
        for name, info in spec["outputs"].items():
            arr = outputs[name]
            assert arr.dtype == np.dtype(info["dtype"])
            H, W, C = info["shape"]
            if info["layout"] == "device":
                Hp, Wp, Cp = info["padded_shape"]
                assert Hp >= H and Wp >= W and Cp >= C and arr.size >= Hp * Wp * Cp
                assert (arr.size * arr.itemsize) % 8 == 0 or arr.size > Hp * Wp * Cp
                if info["order"] == "F8CR":
                    assert Cp % 8 == 0
            else:
                assert info["padded_shape"] is None and arr.size == H * W * C
            if options.get("per_channel") is True:
                assert np.ndim(info["scale"]) == 1 and len(info["scale"]) == C
        boxes, scores, classes = ref.reference_decode(outputs, spec)
        assert boxes.shape == (len(scores), 4)
        assert np.all(np.diff(scores) <= 0)


def test_random_none_threshold_is_a_present_score():
    rng = np.random.default_rng(7)
    for _ in range(20):
        outputs, spec = rc.make_case(rng, activation="none", dtype=rc.RANDOM,
                                     per_class_threshold=False, per_channel=rc.RANDOM)
        th = np.float32(spec["score_threshold"])
        present = np.concatenate([
            ref.logical_float(outputs[h["cls"]], spec["outputs"][h["cls"]]).reshape(-1)
            for h in spec["heads"]])
        assert np.any(present == th)
        assert float(th) == float(np.float32(th))


def test_random_sigmoid_threshold_has_margin():
    rng = np.random.default_rng(8)
    for _ in range(20):
        outputs, spec = rc.make_case(rng, activation="sigmoid", dtype=rc.RANDOM,
                                     per_channel=rc.RANDOM)
        th = np.asarray(spec["score_threshold"], np.float64)
        for h in spec["heads"]:
            x = ref.logical_float(outputs[h["cls"]], spec["outputs"][h["cls"]]).astype(np.float64)
            s = 1 / (1 + np.exp(-x))
            assert np.all(np.abs(s - th) > rc.REL_SCORE_MARGIN * s)


def test_random_cases_exercise_ties_nms_and_both_tests():
    rng = np.random.default_rng(9)
    tie_cases = nms_cases = boundary_cases = 0
    for _ in range(40):
        outputs, spec = rc.make_case(rng, activation="none", dtype="uint8",
                                     max_candidates=None, max_per_class=None, max_total=None)
        cand = ref.decode_candidates(outputs, spec)
        n = len(cand["scores"])
        tie_cases += len(np.unique(cand["scores"])) < n
        nms_cases += len(ref.reference_decode(outputs, spec)[1]) < n
        other = {**spec, "score_test": ">" if spec["score_test"] == ">=" else ">="}
        boundary_cases += len(ref.decode_candidates(outputs, other)["scores"]) != n
    assert tie_cases >= 20 and nms_cases >= 20 and boundary_cases >= 20


def test_random_cases_are_deterministic_per_seed():
    a = rc.make_case(np.random.default_rng(123), dtype=rc.RANDOM, layout=rc.RANDOM)
    b = rc.make_case(np.random.default_rng(123), dtype=rc.RANDOM, layout=rc.RANDOM)
    assert a[1]["iou_threshold"] == b[1]["iou_threshold"]
    for name in a[0]:
        np.testing.assert_array_equal(a[0][name], b[0][name])


# --------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------

def test_full_size_frame_speed():
    """640x640, 80 classes, 3 heads, uint8 device NHCW, realistic threshold."""
    rng = np.random.default_rng(0)
    outputs, infos, heads = {}, {}, []
    for i, s in enumerate((8, 16, 32)):
        g = 640 // s
        for kind, C in (("box", 64), ("cls", 80)):
            name = f"{kind}{i}"
            if kind == "cls":
                q = rng.integers(0, 12, size=(g, g, C)).astype(np.uint8)
                q.reshape(-1)[rng.integers(0, q.size, size=300)] = rng.integers(60, 255, size=300)
            else:
                q = rng.integers(0, 256, size=(g, g, C)).astype(np.uint8)
            padded = (g, g + 2, C)
            outputs[name] = _independent_device_buffer(q, padded, "NHCW", 255)
            infos[name] = {"shape": (g, g, C), "dtype": "uint8", "layout": "device", "order": "NHCW",
                           "padded_shape": padded, "zp": 0.0 if kind == "cls" else 100.0,
                           "scale": 1 / 255 if kind == "cls" else 0.1}
        heads.append({"box": f"box{i}", "cls": f"cls{i}", "stride": s})
    spec = one_head_spec(None, None, 1, (640, 640), heads=heads, outputs=infos,
                         score_threshold=0.25, iou_threshold=0.7, tie_break="hailort",
                         normalized=True, box_order="yxyx", max_per_class=100)
    _, scores, _ = ref.reference_decode(outputs, spec)
    assert len(scores) > 100  # a full-size frame goes through (speed is measured in benchmarks/, not here)
