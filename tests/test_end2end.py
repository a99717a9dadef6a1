"""End-to-end heads (YOLO26 / YOLOv10 one-to-one heads): end2end=True runs Ultralytics' top-k
selection instead of NMS. Checked against (1) Ultralytics' own results on a real one-to-one head
(tests/fixtures/e2e_transplant_yolo11n.npz, see its README: trained yolo11n weights copied into a
one-to-one head, 16 DFL bins, 1 class), (2) a NumPy model of the algorithm written from
Ultralytics' source (end2end_reference.py) on uint8/uint16/float heads with many ties, 1 and 16
bins, agnostic, per-class thresholds and allow-lists, and (3) the HEF reader's choice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hailo_decode as hd
import hef_writer as w
from end2end_reference import end2end_select, tie_groups, ultralytics_boxes
from reference_decoder import dfl_distances, sigmoid32

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "e2e_transplant_yolo11n.npz"
STRIDES = (8, 16, 32)


def _load_npz(path, what):
    if not path.exists():
        pytest.skip(f"{what} absent")
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def e2e():
    return _load_npz(FIXTURE, "e2e fixture")


def _float_config(data, frame, **kw):
    outputs, heads = [], []
    for s in STRIDES:
        for role in ("box", "cls"):
            a = data[f"f{frame}_{role}_{s}"]
            outputs.append(hd.OutputInfo(f"{role}_{s}", a.shape, "float32"))
        heads.append(hd.Head(f"box_{s}", f"cls_{s}", s))
    size = data[f"f{frame}_box_8"].shape[0] * 8
    return hd.DecoderConfig(outputs, heads, image_size=(size, size), semantics="ultralytics",
                            class_activation="sigmoid", end2end=True, **kw)


def _same_rows(got, boxes, scores, classes, *, score_tol=0.0, box_tol=1e-3, clip=None, ulps=0):
    """Same rows in the same order; within a run of equal reference scores the order is compared
    as a set (torch.topk's order of equal scores is not specified; ours is tested elsewhere).
    clip: compare our boxes clipped to [0, clip] (as predict's results are); ulps: reference
    scores that many float32 steps apart count as equal (tie_groups)."""
    assert len(got) == len(scores), (len(got), len(scores))
    np.testing.assert_allclose(got.scores, scores, rtol=0, atol=score_tol)
    gb = np.asarray(got.boxes, np.float64)
    if clip is not None:
        gb = np.clip(gb, 0, clip)
    gc, rc = np.asarray(got.class_ids, np.float64)[:, None], np.asarray(classes, np.float64)[:, None]
    for g in tie_groups(np.asarray(scores), ulps):  # (class, box) rows, sorted inside the run
        ref = np.array(sorted(map(tuple, np.hstack([rc, np.asarray(boxes, np.float64)])[g])))
        mine = np.array(sorted(map(tuple, np.hstack([gc, gb])[g])))
        np.testing.assert_array_equal(mine[:, 0], ref[:, 0])
        np.testing.assert_allclose(mine[:, 1:], ref[:, 1:], rtol=0, atol=box_tol)


@pytest.mark.parametrize("frame", [0, 1])
@pytest.mark.parametrize("prefix,conf", [("", 0.25), ("lo_", 0.05)])
def test_matches_ultralytics_on_a_real_one_to_one_head(e2e, frame, prefix, conf):
    cfg = _float_config(e2e, frame, score_threshold=conf)
    raw = {f"{r}_{s}": e2e[f"f{frame}_{r}_{s}"] for s in STRIDES for r in ("box", "cls")}
    got = hd.Decoder(cfg)(raw)
    p = f"{prefix}r{frame}_"
    # the decode itself, before predict clips to the image: boxes within 1e-3 px
    _same_rows(got, e2e[p + "boxes_raw"], e2e[p + "scores"], e2e[p + "classes"], score_tol=1e-6)
    assert len(got) > 0


def test_ultralytics_ties_in_the_stated_order(e2e):
    """Frame 1 holds equal float16 scores: ours come in the stated order (anchor index ascending)."""
    cfg = _float_config(e2e, 1, score_threshold=0.25)
    raw = {f"{r}_{s}": e2e[f"f1_{r}_{s}"] for s in STRIDES for r in ("box", "cls")}
    got = hd.Decoder(cfg)(raw)
    scores = e2e["r1_scores"]
    tied = [g for g in tie_groups(scores) if len(g) > 1]
    assert tied, "the fixture is meant to hold ties"
    ref = _numpy_reference(raw, cfg, conf=0.25)
    # the model's rows, in its stated order: equal scores by anchor index ascending
    for g in tie_groups(ref[1]):
        assert np.all(np.diff(ref[3][g]) > 0)
    assert any(len(g) > 1 for g in tie_groups(ref[1]))
    np.testing.assert_allclose(got.scores, ref[1], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.boxes, ref[0], rtol=0, atol=1e-3)  # in order, ties included


def _numpy_reference(raw, cfg: hd.DecoderConfig, *, conf, test=">", agnostic=False, classes=None, thresholds=None,
                     max_det=300):
    scores, boxes = [], []
    for h in cfg.heads:
        bo, co = cfg.output(h.box), cfg.output(h.cls)
        b = _dequant(raw[h.box], bo)
        c = _dequant(raw[h.cls], co)
        if cfg.class_activation == "sigmoid":
            c = sigmoid32(c)
        scores.append(c)
        boxes.append(ultralytics_boxes(dfl_distances(b), int(h.stride)))
    return end2end_select(scores, boxes, max_det=max_det, conf=conf, test=test, agnostic=agnostic, classes=classes,
                          thresholds=thresholds)


def _dequant(a, o: hd.OutputInfo):
    if o.dtype == "float32":
        return np.asarray(a, np.float32)
    zp = np.asarray(o.zp, np.float32)
    scale = np.asarray(o.scale, np.float32)
    return ((a.astype(np.float32) - zp) * scale).astype(np.float32)


def _quantize(a, zp, scale, dtype=np.uint8):
    """In float64, as make_task_fixtures.py quantizes (float32 arithmetic rounds a value on a
    half step the other way now and then: another byte than the q_ references decode)."""
    top = np.iinfo(dtype).max
    return np.clip(np.round(np.asarray(a, np.float64) / scale + zp), 0, top).astype(dtype)


def _uint8_setup(data, frame, conf):
    """The fixture's float heads quantized to uint8 per tensor with its own zp/scale (qp_*), as a
    HEF hands them out."""
    outputs, heads, raw = [], [], {}
    for s in STRIDES:
        for role in ("box", "cls"):
            zp, scale = (float(v) for v in data[f"qp_{role}_{s}"])
            raw[f"{role}_{s}"] = _quantize(data[f"f{frame}_{role}_{s}"], zp, scale)
            outputs.append(hd.OutputInfo(f"{role}_{s}", raw[f"{role}_{s}"].shape, "uint8", zp=zp, scale=scale))
        heads.append(hd.Head(f"box_{s}", f"cls_{s}", s))
    size = data[f"f{frame}_box_8"].shape[0] * 8
    cfg = hd.DecoderConfig(outputs, heads, image_size=(size, size), semantics="ultralytics",
                           class_activation="sigmoid", end2end=True, score_threshold=conf)
    return cfg, raw


@pytest.mark.parametrize("frame", [0, 1])
def test_uint8_heads_as_a_hef_hands_them_match_the_numpy_model(e2e, frame):
    """The fixture's heads quantized to uint8 per tensor with its own zp/scale; conf 0.001
    (evaluation), so that the top-k is full and ties among uint8 scores are everywhere."""
    cfg, raw = _uint8_setup(e2e, frame, 0.001)
    got = hd.Decoder(cfg)(raw)
    ref = _numpy_reference(raw, cfg, conf=0.001)
    assert len(got) == len(ref[1]) > 50
    np.testing.assert_array_equal(got.class_ids, ref[2])
    np.testing.assert_allclose(got.scores, ref[1], rtol=0, atol=1e-6)
    # same rows in the same order (ties included: uint8 sigmoid scores come from one table, so
    # the float scores agree exactly with NumPy's float32 or differ by an ulp at most)
    np.testing.assert_allclose(got.boxes, ref[0], rtol=0, atol=1e-3)


# --------------------------------------------------------------------------------------------
# A trained one-to-one head: YOLO26n trained here on synthetic shapes (tests/fixtures/README.md,
# e2e_synthetic_yolo26n.npz): Detect with 4-channel box tensors (reg_max 1), 4 classes, 320 x 320,
# three unseen pictures; Ultralytics' predict(nms=False) at conf 0.25, 0.05 and 0.001 (eval_: the
# top-k full, 300 rows a frame) on the float heads, and the same decode of the uint8 heads (q_).
# --------------------------------------------------------------------------------------------
TRAINED = FIXTURE.parent / "e2e_synthetic_yolo26n.npz"
TRAINED_SETS = [("", 0.25), ("lo_", 0.05), ("eval_", 0.001)]
TRAINED_FRAMES = [0, 1, 2]
# a uint8 score can land on the other side of conf from its float score: float rows within
# SCORE_BAND of conf may come or go between the float and the uint8 heads, no others
SCORE_BAND = 0.01
# torch's sigmoid gives equal logits results one ulp apart (tie_groups): ties up to 2 ulps
TORCH_ULPS = 2
UINT8_MIN_IOU = 0.95  # measured: >= 0.979 (0.25 and 0.05, three frames)


@pytest.fixture(scope="module")
def e2e26():
    return _load_npz(TRAINED, "trained e2e fixture")


def _float_raw(data, frame):
    return {f"{r}_{s}": data[f"f{frame}_{r}_{s}"] for s in STRIDES for r in ("box", "cls")}


class _First:
    """The first n rows of a Detections (boxes, scores, class ids)."""

    def __init__(self, d, n):
        self.boxes, self.scores, self.class_ids = d.boxes[:n], d.scores[:n], d.class_ids[:n]

    def __len__(self):
        return len(self.scores)


def _cut(scores):
    """Rows before the top-k's cut: a full top-k (300 rows) may end inside a run of equal scores,
    and which of them torch.topk keeps is not specified; that last run is left out."""
    return int(tie_groups(scores, TORCH_ULPS)[-1][0]) if len(scores) == 300 else len(scores)


def _same_rows_to_the_cut(got, data, p, *, score_tol=1e-6):
    """_same_rows, except that a run of equal scores at the top-k's cut (a full top-k: 300 rows)
    may hold other members of that run: which of several equal scores torch.topk keeps is not
    specified. Those rows are compared by score and count only."""
    scores = data[p + "scores"]
    assert len(got) == len(scores), (len(got), len(scores))
    np.testing.assert_allclose(got.scores, scores, rtol=0, atol=score_tol)
    cut = _cut(scores)
    _same_rows(_First(got, cut), data[p + "boxes_raw"][:cut], scores[:cut], data[p + "classes"][:cut],
               score_tol=score_tol, ulps=TORCH_ULPS)


@pytest.mark.parametrize("frame", TRAINED_FRAMES)
@pytest.mark.parametrize("prefix,conf", TRAINED_SETS)
def test_trained_one_to_one_head_float_matches_ultralytics(e2e26, frame, prefix, conf):
    """Float heads: Ultralytics' rows in its order (boxes within 1e-3 px before predict's clip,
    scores within 1e-6, classes exact); within a run of equal scores the same set."""
    got = hd.Decoder(_float_config(e2e26, frame, score_threshold=conf))(_float_raw(e2e26, frame))
    p = f"{prefix}r{frame}_"
    _same_rows_to_the_cut(got, e2e26, p)
    assert len(got) > 0
    # and the clipped boxes predict hands out
    size = e2e26[f"f{frame}_box_8"].shape[0] * 8
    cut = _cut(e2e26[p + "scores"])
    _same_rows(_First(got, cut), e2e26[p + "boxes"][:cut], e2e26[p + "scores"][:cut], e2e26[p + "classes"][:cut],
               score_tol=1e-6, clip=size, ulps=TORCH_ULPS)


@pytest.mark.parametrize("frame", TRAINED_FRAMES)
@pytest.mark.parametrize("prefix,conf", TRAINED_SETS)
def test_trained_one_to_one_head_uint8_matches_ultralytics_on_the_same_bytes(e2e26, frame, prefix, conf):
    """uint8 heads (per tensor, the fixture's qp): the q_ rows, Ultralytics' decode of the same
    bytes dequantized."""
    cfg, raw = _uint8_setup(e2e26, frame, conf)
    got = hd.Decoder(cfg)(raw)
    _same_rows_to_the_cut(got, e2e26, f"q_{prefix}r{frame}_")


@pytest.mark.parametrize("frame", TRAINED_FRAMES)
@pytest.mark.parametrize("quant", [False, True])
def test_trained_one_to_one_head_rows_in_the_stated_order(e2e26, frame, quant):
    """conf 0.001 (the top-k full or nearly: 258 to 300 rows): every row in the stated order against the NumPy model
    (end2end_reference.py: equal scores by stage-1 rank -- the anchor's best score, then anchor
    index ascending -- then class), the cut included."""
    if quant:
        cfg, raw = _uint8_setup(e2e26, frame, 0.001)
    else:
        cfg, raw = _float_config(e2e26, frame, score_threshold=0.001), _float_raw(e2e26, frame)
    got = hd.Decoder(cfg)(raw)
    ref = _numpy_reference(raw, cfg, conf=0.001)
    assert len(got) == len(ref[1]) > 250
    np.testing.assert_array_equal(got.class_ids, ref[2])
    np.testing.assert_allclose(got.scores, ref[1], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.boxes, ref[0], rtol=0, atol=1e-3)


def test_trained_one_to_one_head_fixture_holds_ties(e2e26):
    """The float16-rounded heads give equal scores among the 300 rows at conf 0.001 (so the tie
    order above is exercised, not vacuous)."""
    runs = [len(g) for f in TRAINED_FRAMES for g in tie_groups(e2e26[f"eval_r{f}_scores"])]
    assert max(runs) > 1


def _box_iou(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    area = lambda x: np.prod(x[:, 2:] - x[:, :2], axis=1)  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


@pytest.mark.parametrize("frame", TRAINED_FRAMES)
@pytest.mark.parametrize("prefix,conf", TRAINED_SETS[:2])
def test_trained_one_to_one_head_uint8_finds_ultralytics_float_objects(e2e26, frame, prefix, conf):
    """From the uint8 heads, the objects of Ultralytics' float results: one to one, the same class,
    box IoU >= UINT8_MIN_IOU. Float rows with a score within SCORE_BAND of conf may come or go
    (the uint8 rows pair with the float rows at conf - SCORE_BAND, from the eval_ set); every
    other float row is found."""
    cfg, raw = _uint8_setup(e2e26, frame, conf)
    got = hd.Decoder(cfg)(raw)
    pool = e2e26[f"eval_r{frame}_scores"] > conf - SCORE_BAND
    boxes, classes = e2e26[f"eval_r{frame}_boxes_raw"][pool], e2e26[f"eval_r{frame}_classes"][pool]
    scores = e2e26[f"eval_r{frame}_scores"][pool]
    overlap = _box_iou(got.boxes, boxes) if len(got) else np.zeros((0, len(boxes)))
    used = set()
    for a in range(len(got)):
        cand = [j for j in np.argsort(-overlap[a]) if j not in used and classes[j] == got.class_ids[a]
                and overlap[a, j] >= UINT8_MIN_IOU]
        assert cand, f"uint8 row {a} ({got.scores[a]:.4f}) has no float partner"
        used.add(int(cand[0]))
    clear = {j for j in range(len(scores)) if scores[j] > conf + SCORE_BAND}
    assert clear <= used, sorted(clear - used)
    assert len(e2e26[f"{prefix}r{frame}_scores"]) > 0


# --------------------------------------------------------------------------------------------
# Synthetic heads: ties, bins 1 and 16, dtypes, agnostic, per-class thresholds, allow-lists
# --------------------------------------------------------------------------------------------
def _synthetic(rng, *, bins, dtype, nc, grids=((16, 16), (8, 8), (4, 4)), levels=6, per_channel=False):
    """Class values drawn from a few levels (many exact ties, activation none: the reference's
    scores are then bit-identical to the decoder's)."""
    outputs, heads, raw = [], [], {}
    top = {"uint8": 255, "uint16": 65535}.get(dtype)
    for k, (gh, gw) in enumerate(grids):
        stride = 128 // gw
        box_name, cls_name = f"box{k}", f"cls{k}"
        if bins == 1:
            box = rng.uniform(0.2, 6.0, size=(gh, gw, 4)).astype(np.float32)
        else:
            box = rng.normal(0, 2.0, size=(gh, gw, 4 * bins)).astype(np.float32)
        cls = (rng.integers(0, levels, size=(gh, gw, nc)) / (levels - 1)).astype(np.float32)
        if dtype == "float32":
            raw[box_name], raw[cls_name] = box, cls
            outputs += [hd.OutputInfo(box_name, box.shape, "float32"), hd.OutputInfo(cls_name, cls.shape, "float32")]
        else:
            bscale = float(np.abs(box).max()) * 2 / top
            bzp = top // 2
            raw[box_name] = _quantize(box, bzp, bscale, np.dtype(dtype).type)
            if per_channel:
                czp = tuple(float(v) for v in rng.integers(0, 3, nc))
                cscale = tuple(float(v) for v in (1.0 / top) * rng.uniform(0.9, 1.0, nc))
            else:
                czp, cscale = 0.0, 1.0 / top
            q = np.clip(np.round(cls / np.asarray(cscale) + np.asarray(czp)), 0, top)
            raw[cls_name] = q.astype(np.dtype(dtype).type)
            outputs += [hd.OutputInfo(box_name, box.shape, dtype, zp=bzp, scale=bscale),
                        hd.OutputInfo(cls_name, cls.shape, dtype, zp=czp, scale=cscale)]
        heads.append(hd.Head(box_name, cls_name, stride))
    return outputs, heads, raw


def _check_exact(got, ref):
    n = len(ref[1])
    assert len(got) == n
    np.testing.assert_array_equal(got.scores, ref[1])  # bit-identical: order and ties compared exactly
    np.testing.assert_array_equal(got.class_ids, ref[2])
    np.testing.assert_allclose(got.boxes, ref[0], rtol=0, atol=1e-3)


@pytest.mark.parametrize("bins", [1, 16])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("agnostic", [False, True])
def test_top_k_with_ties_against_the_numpy_model(bins, dtype, agnostic):
    rng = np.random.default_rng(1000 * bins + len(dtype) + agnostic)
    for trial in range(4):
        nc = [1, 3, 7, 80][trial]
        outputs, heads, raw = _synthetic(rng, bins=bins, dtype=dtype, nc=nc, per_channel=(trial == 2 and dtype != "float32"))
        for max_det, conf in ((7, 0.1), (50, 0.3), (300, 0.001), (1000, 0.5)):
            cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics",
                                   class_activation="none", end2end=True, agnostic=agnostic, max_total=max_det,
                                   score_threshold=conf)
            got = hd.Decoder(cfg)(raw)
            ref = _numpy_reference(raw, cfg, conf=conf, agnostic=agnostic, max_det=max_det)
            _check_exact(got, ref)


def test_k_counts_every_anchor_and_the_score_test_comes_after():
    """k = min(max_det, all anchors) and the confidence test runs on the k chosen: with max_det 5
    and 20 pairs over the threshold, exactly the 5 best are kept; >= vs > at a score equal to the
    threshold (hailort's and Ultralytics' tests)."""
    rng = np.random.default_rng(7)
    outputs, heads, raw = _synthetic(rng, bins=1, dtype="uint8", nc=4, levels=3)
    for test in (">", ">="):
        cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics",
                               class_activation="none", end2end=True, max_total=5, score_threshold=0.5,
                               score_test=test)
        got = hd.Decoder(cfg)(raw)
        ref = _numpy_reference(raw, cfg, conf=0.5, test=test, max_det=5)
        _check_exact(got, ref)
        assert len(got) == 5
        if test == ">":
            assert np.all(got.scores > 0.5)


def test_per_class_thresholds_and_allow_list_take_slots_first():
    """As Ultralytics: the class filter runs after the top-k, so a class left out still takes its
    slots (the allow-list is applied to the k chosen, not before)."""
    rng = np.random.default_rng(11)
    outputs, heads, raw = _synthetic(rng, bins=16, dtype="uint8", nc=5)
    th = np.array([0.1, 0.9, 0.3, 0.5, 0.2])
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                           end2end=True, max_total=40, score_threshold=tuple(th), classes=(0, 2, 4))
    got = hd.Decoder(cfg)(raw)
    ref = _numpy_reference(raw, cfg, conf=0.0, thresholds=th, classes=(0, 2, 4), max_det=40)
    _check_exact(got, ref)
    everything = _numpy_reference(raw, cfg.replace(classes=None), conf=0.0, thresholds=th, max_det=40)
    assert len(got) < len(everything[1])  # the left-out classes did take slots


def _heads_with_quantizations(rng, quants, nc, fill):
    """uint8 heads (16x16, 8x8, 4x4, 1 bin), head k's classes quantized with quants[k] (zp,
    scale), class bytes from fill(shape)."""
    outputs, heads, raw = [], [], {}
    for k, ((gh, gw), (zp, scale)) in enumerate(zip(((16, 16), (8, 8), (4, 4)), quants)):
        box = rng.integers(20, 120, size=(gh, gw, 4)).astype(np.uint8)
        cls = fill((gh, gw, nc))
        raw[f"box{k}"], raw[f"cls{k}"] = box, cls
        outputs += [hd.OutputInfo(f"box{k}", box.shape, "uint8", zp=0, scale=0.05),
                    hd.OutputInfo(f"cls{k}", cls.shape, "uint8", zp=zp, scale=scale)]
        heads.append(hd.Head(f"box{k}", f"cls{k}", 128 // gw))
    return outputs, heads, raw


@pytest.mark.parametrize("agnostic", [False, True])
@pytest.mark.parametrize("max_det,conf", [(7, 0.1), (50, 0.001), (300, 0.001), (300, 0.4)])
def test_heads_with_their_own_quantization_tie_across_heads(agnostic, max_det, conf):
    """Each head its own zp/scale (powers of two, so that equal scores come from different bytes of
    different heads), and one head per channel (the general path beside the byte path): the
    counting selection's score levels span heads, and its order is the stated one."""
    rng = np.random.default_rng(31 + agnostic)
    nc = 7

    def fill(shape):
        return rng.choice(np.array([0, 3, 8, 16, 40, 64, 66, 128, 130, 200], np.uint8), size=shape)

    per_channel = (tuple(float(v) for v in rng.integers(0, 3, nc)), tuple(1 / 128 for _ in range(nc)))
    for quants in (((0, 1 / 256), (0, 1 / 128), (2, 1 / 256)), ((0, 1 / 256), per_channel, (0, 1 / 64))):
        outputs, heads, raw = _heads_with_quantizations(rng, quants, nc, fill)
        cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                               end2end=True, agnostic=agnostic, max_total=max_det, score_threshold=conf)
        got = hd.Decoder(cfg)(raw)
        ref = _numpy_reference(raw, cfg, conf=conf, agnostic=agnostic, max_det=max_det)
        assert any(len(g) > 1 for g in tie_groups(ref[1]))
        _check_exact(got, ref)


@pytest.mark.parametrize("agnostic", [False, True])
def test_sigmoid_saturation_ties_bytes_of_one_head(agnostic):
    """Sigmoid logits with a wide scale: every byte from 162 up scores exactly 1.0 in float32, so
    one score comes from many bytes of one head (and of every head); more such anchors than k, so
    that the k-th place falls inside that tie and anchor, then class order decides."""
    rng = np.random.default_rng(77)
    nc = 5

    def fill(shape):
        v = rng.integers(0, 60, size=shape)  # logits <= -34: scores far below the saturated ones
        hot = rng.random(shape) < 0.5
        v[hot] = rng.integers(162, 256, size=int(hot.sum()))
        return v.astype(np.uint8)

    outputs, heads, raw = _heads_with_quantizations(rng, [(128, 0.5)] * 3, nc, fill)
    for max_det in (50, 300):
        cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics",
                               class_activation="sigmoid", end2end=True, agnostic=agnostic, max_total=max_det,
                               score_threshold=0.5)
        got = hd.Decoder(cfg)(raw)
        ref = _numpy_reference(raw, cfg, conf=0.5, agnostic=agnostic, max_det=max_det)
        assert len(ref[1]) == max_det and np.all(ref[1] == 1.0)
        _check_exact(got, ref)


@pytest.mark.parametrize("agnostic", [False, True])
@pytest.mark.parametrize("max_det", [30, 60, 100])
def test_many_anchors_tied_at_the_kth_score_across_heads(agnostic, max_det):
    """A real head's background at a low threshold: most anchors share one small score (here every
    head's background bytes top out at 2/256, from a different byte in each head's quantization),
    a few anchors score higher. The k-th place falls inside that tie, with many more tied anchors
    than places (the decoder then fills the tie's places in anchor order and stops early, topk.cpp):
    the same rows, in the same order, as the two top-ks over every anchor."""
    rng = np.random.default_rng(909 + max_det + agnostic)
    nc = 7
    backgrounds = iter((3, 2, 5))  # bytes 0..2 at scale 1/256; 0..1 at 1/128; 2..4 at zp 2, 1/256

    def fill(shape):
        v = rng.integers(0, next(backgrounds), size=shape)
        hot = rng.random(shape) < 0.005  # about 12 anchors above the background, fewer than k
        v[hot] = rng.integers(10, 256, size=int(hot.sum()))
        return v.astype(np.uint8)

    outputs, heads, raw = _heads_with_quantizations(rng, ((0, 1 / 256), (0, 1 / 128), (2, 1 / 256)), nc, fill)
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                           end2end=True, agnostic=agnostic, max_total=max_det, score_threshold=0.001)
    got = hd.Decoder(cfg)(raw)
    ref = _numpy_reference(raw, cfg, conf=0.001, agnostic=agnostic, max_det=max_det)
    scores = np.concatenate([_dequant(raw[h.cls], cfg.output(h.cls)).reshape(-1, nc) for h in cfg.heads]).max(1)
    kth = np.sort(scores)[::-1][max_det - 1]
    assert kth == np.float32(2 / 256) and (scores == kth).sum() > 2 * max_det + 64  # a wide tie at the k-th
    _check_exact(got, ref)


def test_sigmoid_logits_match_the_numpy_model():
    rng = np.random.default_rng(5)
    outputs, heads, raw = _synthetic(rng, bins=1, dtype="uint8", nc=6, levels=40)
    # class values as logits over [-8, 8]
    outputs = [o if not o.name.startswith("cls") else hd.OutputInfo(o.name, o.shape, "uint8", zp=128, scale=16 / 255)
               for o in outputs]
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="sigmoid",
                           end2end=True, score_threshold=0.001)
    got = hd.Decoder(cfg)(raw)
    ref = _numpy_reference(raw, cfg, conf=0.001)
    assert len(got) == len(ref[1]) > 0
    np.testing.assert_allclose(got.scores, ref[1], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got.class_ids, ref[2])
    np.testing.assert_allclose(got.boxes, ref[0], rtol=0, atol=1e-3)


def test_end2end_is_a_bool_and_shows_in_repr():
    rng = np.random.default_rng(0)
    outputs, heads, _ = _synthetic(rng, bins=1, dtype="uint8", nc=2)
    with pytest.raises(TypeError, match='end2end must be true or false, got "yes"'):
        hd.DecoderConfig(outputs, heads, image_size=(128, 128), end2end="yes")
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), end2end=True)
    assert "end2end=True" in repr(cfg)
    assert cfg.replace(semantics="ultralytics").end2end is True  # explicit, kept across presets


def test_hailort_preset_boxes_and_output_forms():
    """Under the hailort preset the selected rows come normalized yxyx and pack into
    HAILO_NMS_BY_CLASS like any other result."""
    rng = np.random.default_rng(3)
    outputs, heads, raw = _synthetic(rng, bins=1, dtype="uint8", nc=3)
    px = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                          end2end=True, score_threshold=0.2, score_test=">=")
    nz = px.replace(semantics="hailort", class_activation="none", score_threshold=0.2, max_per_class=300)
    a, b = hd.Decoder(px)(raw), hd.Decoder(nz)(raw)
    assert len(a) == len(b) > 0
    np.testing.assert_allclose(np.asarray(b.boxes)[:, [1, 0, 3, 2]] * 128, a.boxes, rtol=0, atol=1e-3)
    back = hd.decode_hailo_nms(hd.Decoder(nz).decode_to_hailo_nms(raw), num_classes=3, max_per_class=300)
    assert len(back) == len(b)
    def rows(d):
        r = np.column_stack([np.asarray(d.class_ids, np.float64), np.asarray(d.scores, np.float64),
                             np.asarray(d.boxes, np.float64)])
        return r[np.lexsort(r.T[::-1])]
    np.testing.assert_array_equal(rows(back), rows(b))  # the same rows, exactly (float32 in the buffer)
    by_score = hd.Decoder(nz).decode_to_hailo_nms(raw, format="by_score", max_bboxes_total=300)
    np.testing.assert_array_equal(rows(hd.decode_hailo_nms(by_score, format="by_score", num_classes=3,
                                                           max_bboxes_total=300)), rows(b))


# --------------------------------------------------------------------------------------------
# from_hef / inspect: 4-channel box tensors are told from DFL ones
# --------------------------------------------------------------------------------------------
def _hef(box_channels):
    layers = [w.Layer("net/input_layer1", (128, 128, 3), output=False, limvals=(0.0, 255.0))]
    pad = 10
    for g in (16, 8, 4):
        layers.append(w.Layer(f"net/box{g}", (g, g, box_channels), zp=128.0, scale=0.05, pad_index=pad))
        layers.append(w.Layer(f"net/cls{g}", (g, g, 3), zp=0.0, scale=1 / 255, pad_index=pad + 1))
        pad += 2
    return w.wrap(w.hef_proto([w.network_group("net", layers)]))


def test_from_hef_tells_end_to_end_heads_from_dfl_heads(tmp_path):
    p4, p64 = tmp_path / "yolo26.hef", tmp_path / "yolov8.hef"
    p4.write_bytes(_hef(4))
    p64.write_bytes(_hef(64))
    c4, c64 = hd.DecoderConfig.from_hef(str(p4)), hd.DecoderConfig.from_hef(str(p64))
    assert (c4.bins, c4.end2end) == (1, True)
    assert (c64.bins, c64.end2end) == (16, False)
    assert hd.DecoderConfig.from_hef(str(p4), end2end=False).end2end is False     # overridable
    assert hd.DecoderConfig.from_hef(str(p64), end2end=True).end2end is True      # YOLOv10
    ok, why = hd.config.end2end_choice(c4)
    assert ok and "4 channels" in why
    ok, why = hd.config.end2end_choice(c64)
    assert not ok and "end2end=True" in why


def test_inspect_says_which_selection_and_why(tmp_path, capsys):
    from hailo_decode.cli import main
    p = tmp_path / "yolo26.hef"
    p.write_bytes(_hef(4))
    assert main(["inspect", str(p)]) in (0, None)
    out = capsys.readouterr().out
    assert "selection: end-to-end top-k (no NMS): box tensors have 4 channels" in out


def test_max_det_below_300_is_predicts_top_300_then_cut():
    """Ultralytics 8.4's predict runs the head's top-k with max(max_det, 300) and cuts to max_det
    after the score test; with the stated tie order that equals a top-k with k = max_det, which is
    what the decoder runs."""
    rng = np.random.default_rng(31)
    for trial in range(6):
        outputs, heads, raw = _synthetic(rng, bins=1, dtype="uint8", nc=[2, 5, 80][trial % 3], levels=[3, 6, 20][trial % 3])
        for max_det in (1, 7, 50, 299):
            cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                                   end2end=True, max_total=max_det, score_threshold=0.2)
            got = hd.Decoder(cfg)(raw)
            predict = _numpy_reference_topk(raw, cfg, conf=0.2, max_det=max_det, topk=300)
            _check_exact(got, predict)


def _numpy_reference_topk(raw, cfg, *, conf, max_det, topk):
    scores, boxes = [], []
    for h in cfg.heads:
        scores.append(_dequant(raw[h.cls], cfg.output(h.cls)))
        boxes.append(ultralytics_boxes(dfl_distances(_dequant(raw[h.box], cfg.output(h.box))), int(h.stride)))
    return end2end_select(scores, boxes, max_det=max_det, conf=conf, topk=topk)


@pytest.mark.parametrize("agnostic", [False, True])
@pytest.mark.parametrize("scale", [1 / 255, 1 / 64])
def test_gated_selection_equals_the_plain_one_at_every_threshold(agnostic, scale):
    """The decoder ranks only anchors whose best score passes conf (topk.hpp states why that keeps
    every surviving row); the NumPy model runs Ultralytics' two top-ks over every anchor. Random
    80-class uint8 heads (sparse high bytes, or a few levels: ties everywhere), thresholds exactly
    on a byte's score, between two, at 0 (below every byte when the zero point is 0), with > and
    >=, k below and above the number of passing anchors: same rows, same order, bit-identical
    scores (activation none: the model's float32 scores are the decoder's exactly, so conf can sit
    exactly on a level; the levels conf sits on are in [0, 1], where a score threshold must be)."""
    rng = np.random.default_rng(4242 + 2 * agnostic + (scale > 0.01))
    nc, grids = 80, ((12, 12), (6, 6), (3, 3))
    for trial in range(6):
        zp = float(trial % 4)
        outputs, heads, raw = [], [], {}
        for k, (gh, gw) in enumerate(grids):
            if trial % 3 == 2:
                cls = (rng.integers(0, 5, size=(gh, gw, nc)) * 50).astype(np.uint8)
            else:
                cls = rng.integers(0, 40, size=(gh, gw, nc)).astype(np.uint8)
                hit = rng.random(cls.shape) < 0.006
                cls[hit] = rng.integers(60, 256, size=int(hit.sum()))
            box = rng.integers(0, 256, size=(gh, gw, 4)).astype(np.uint8)
            raw[f"box{k}"], raw[f"cls{k}"] = box, cls
            outputs += [hd.OutputInfo(f"box{k}", box.shape, "uint8", zp=0, scale=0.05),
                        hd.OutputInfo(f"cls{k}", cls.shape, "uint8", zp=zp, scale=scale)]
            heads.append(hd.Head(f"box{k}", f"cls{k}", 96 // gw))  # stride x grid = 96
        # A byte's score as the model computes it (float32 dequantization), so that conf sits
        # exactly on a level.
        levels = (np.arange(256, dtype=np.float32) - np.float32(zp)) * np.float32(scale)
        q = int(rng.integers(40, min(255, int(1 / scale + zp))))  # levels q and q + 1 within [0, 1]
        on_level, between = float(levels[q]), float((levels[q] + levels[q + 1]) / 2)
        assert np.float32(on_level) == levels[q]
        for conf in (on_level, between, 0.0, 0.2):
            for test in (">", ">="):
                for max_det in (1, 7, 300, 1000):
                    cfg = hd.DecoderConfig(outputs, heads, image_size=(96, 96), semantics="ultralytics",
                                           class_activation="none", end2end=True, agnostic=agnostic,
                                           max_total=max_det, score_threshold=conf, score_test=test)
                    got = hd.Decoder(cfg)(raw)
                    ref = _numpy_reference(raw, cfg, conf=conf, test=test, agnostic=agnostic, max_det=max_det)
                    _check_exact(got, ref)
