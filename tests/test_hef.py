"""The HEF reader (hailo_decode.hef) and `hailo-decode inspect`.

Real HEFs (read from ../shared/hefs relative to the repository root, or $HAILO_DECODE_HEFS; never
copied into the repository) are checked against the values an independent reader recorded in
their manifest.json. What the real files lack (a YOLOv8 NMS op, per-feature quantization, padded
FCR/F8CR/NHCW, uint16, Hailo-8L partial layouts, malformed files) is built by tests/hef_writer.py,
an encoder written separately from the reader."""

from __future__ import annotations

import io
import json
import os
import random
import struct
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hef_writer as w  # noqa: E402

import hailo_decode as hd  # noqa: E402
from hailo_decode import hef as H  # noqa: E402
from hailo_decode.hef import HefError, config_from_hef, read_hef  # noqa: E402
from hailo_decode.cli import main as cli_main  # noqa: E402
from hailo_decode.cli.inspect import format_report, inspect_report  # noqa: E402
from hailo_decode.diagnostics import diagnose_outputs  # noqa: E402

HEFS = Path(os.environ.get("HAILO_DECODE_HEFS") or Path(__file__).resolve().parents[2] / "shared" / "hefs")
# Hang guards, not speed tests: a parse takes milliseconds; a loop in the reader would take forever.
HANG_SECONDS = 10.0
FUZZ = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _manifest():
    path = HEFS / "manifest.json"
    if not path.is_file():
        return []
    with open(path, encoding="utf-8") as f:
        return json.load(f)["hefs"]


MANIFEST = _manifest()


def _entry_id(e):
    return e["file"]


@pytest.fixture(params=MANIFEST or [None], ids=[_entry_id(e) for e in MANIFEST] or ["no-hefs"])
def real(request):
    entry = request.param
    if entry is None:
        pytest.skip(f"real HEFs not found in {HEFS} (set HAILO_DECODE_HEFS)")
    path = HEFS / entry["file"]
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return entry, path


def _real_path(name):
    path = HEFS / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


# ---------------------------------------------------------------------------------------------
# Real files against the manifest
# ---------------------------------------------------------------------------------------------
def test_real_header(real):
    entry, path = real
    info = read_hef(path)
    h, m = info.header, entry["header"]
    assert h.version == m["version"] == entry["header_version"]
    assert h.header_size == m["header_size"] == {0: 32, 1: 28, 2: 44, 3: 56}[h.version]
    assert h.proto_size == m["proto_size"]
    assert h.file_size == m["size"] == path.stat().st_size
    if h.version == 0:
        assert h.checksum == m["md5"] and h.checksum_ok is True
    elif h.version == 1:
        assert int(h.checksum, 16) == int(m["crc"], 16) and h.ccws_size == m["ccws_size"]
        assert h.checksum_ok is True
    elif h.version == 2:
        assert int(h.checksum, 16) == int(m["xxh3"], 16) and h.ccws_size == m["ccws_size"]
    else:
        assert int(h.checksum, 16) == int(m["xxh3"], 16)
        assert int(h.proto_checksum, 16) == int(m["proto_xxh3"], 16)
        assert h.ccws_size == m["ccws_size_with_padding"]
        assert h.padding_size == m["hef_padding_size"]
        assert h.additional_info_size == m["additional_info_size"]
    if h.version >= 2:  # xxh3-64: verified only when the optional xxhash module is installed
        try:
            import xxhash  # noqa: F401
            assert h.checksum_ok is True
        except ImportError:
            assert h.checksum_ok is None
    assert entry["hw_arch"].endswith("__" + info.hw_arch_name)
    assert info.sdk_version == entry["sdk_version"]


def test_real_layers(real):
    entry, path = real
    info = read_hef(path)
    assert len(info.network_groups) == 1
    ng = info.network_groups[0]
    assert ng.name == entry["network_group"]
    assert ng.partial_layout is (entry["partial_network_groups"] is not None)
    assert list(ng.sorted_outputs_order) == entry["sorted_outputs_order"]
    assert [o.name for o in ng.outputs] == entry["sorted_outputs_order"]  # vstream order
    for kind, layers in (("inputs", ng.inputs), ("outputs", ng.outputs)):
        expected = {e["name"]: e for e in entry[kind]}
        got = {x.name: x for x in layers}
        assert set(got) == set(expected), kind
        for name, e in expected.items():
            x = got[name]
            assert list(x.shape) == e["shape_hwc"], name
            assert x.format_code == e["format_order"], name
            assert x.device_order == H.FORMAT_CODES[e["format_order"]]
            assert x.host_order == H.HOST_ORDER[x.device_order]
            assert list(x.original_names) == e["original_names"], name
            assert [x.qp_zp, x.qp_scale] == e["qp_zp_scale"], name  # float32 in the HEF: exact
            assert x.dtype == "uint8" and x.bytes_per_element == 1
            assert x.direction == kind[:-1]
    assert ng.ops == () and ng.nms is None and not entry["net_flow_ops"]


def test_real_files_details():
    """What surprised: SDK 3.x HEFs carry per-feature lists without the OUTPUT_SCALE_PER_FEATURE
    extension (all equal to the tensor's zp/scale; HailoRT ignores them), NC outputs are padded to
    a multiple of 8 features, SDK 5.x HEFs put NHCW on inputs and do not pad."""
    hand = read_hef(_real_path("hand_landmark_lite_h8.hef")).network_groups[0]
    fc1 = hand.output("hand_landmark_lite/fc1")
    assert fc1.device_order == fc1.host_order == "NC" and fc1.vstream_shape == (63,)
    assert fc1.padded_shape == (1, 1, 64) and fc1.hw_shape == (1, 1, 64)
    assert fc1.qp_zps is not None and len(fc1.qp_zps) == 63 and set(fc1.qp_zps) == {52.0}
    assert not fc1.per_feature and fc1.zp == 52.0
    assert hand.output("hand_landmark_lite/fc4").padded_shape == (1, 1, 8)
    scrfd = read_hef(_real_path("scrfd_2.5g_h10h_v3hdr.hef"))
    ng = scrfd.network_groups[0]
    assert scrfd.hw_arch_name == "HAILO1XH" and "HW_PADDING" not in scrfd.extension_names
    assert H._EXT_HW_PADDING in scrfd.optional_extensions
    assert ng.inputs[0].device_order == "NHCW" and ng.inputs[0].host_order == "NHWC"
    for o in ng.outputs:
        assert o.device_order == "NHCW" and o.host_order == "NHWC" and o.padded_shape == o.shape
        assert o.qp_zps is None


def test_real_config_reasons():
    with pytest.raises(ValueError, match=r"9 outputs: cannot pair outputs by shape"):
        config_from_hef(_real_path("scrfd_2.5g_h10h_v3hdr.hef"))
    with pytest.raises(ValueError, match=r"fc1' is NC \(512,\)"):
        config_from_hef(_real_path("arcface_mobilefacenet_h8_v2hdr.hef"))


def test_real_config_with_explicit_heads():
    """SCRFD is not YOLOv8, but its bbox/score pairs still show the plumbing: explicit heads pick
    the outputs, NHCW device buffers become host NHWC."""
    path = _real_path("scrfd_2.5g_h10h_v3hdr.hef")
    # box tensors with 8 channels (2 bins x 4 sides) and 2-class scores, per stride
    heads = [hd.Head("scrfd_2_5g/conv43", "scrfd_2_5g/conv42", 8), hd.Head("scrfd_2_5g/conv50", "scrfd_2_5g/conv49", 16),
             hd.Head("scrfd_2_5g/conv56", "scrfd_2_5g/conv55", 32)]
    cfg = config_from_hef(path, heads=heads)
    assert cfg.num_classes == 2 and cfg.bins == 2 and cfg.image_size == (640, 640)
    assert {o.order for o in cfg.outputs} == {"NHWC"} and len(cfg.outputs) == 6
    dev = config_from_hef(path, heads=heads, device_buffers=True)
    assert {o.order for o in dev.outputs} == {"NHCW"} and all(o.device for o in dev.outputs)
    assert cfg.class_activation == "none"  # SCRFD's score outputs: zp 0, scale 1/255, a sigmoid on chip
    with pytest.raises(ValueError, match="does not have"):
        config_from_hef(path, heads=[hd.Head("nope", "scrfd_2_5g/conv42", 8)])


def test_real_truncated_at_section_boundaries(real):
    _, path = real
    data = path.read_bytes()
    for cut in w.section_boundaries(data):
        t0 = time.perf_counter()
        with pytest.raises(HefError):
            read_hef(data[:cut])
        assert time.perf_counter() - t0 < HANG_SECONDS
    with pytest.raises(HefError, match="beyond"):
        read_hef(data + b"\0")


def test_real_checksums_catch_corruption():
    for name in ("hand_landmark_lite_h8.hef", "arcface_mobilefacenet_h8_v1hdr.hef"):
        data = bytearray(_real_path(name).read_bytes())
        data[len(data) // 2] ^= 0x10
        with pytest.raises(HefError, match="checksum"):
            read_hef(bytes(data))


def test_real_mutations(real):
    """Byte mutations of the protobuf section (checksum off so the parser sees them): every one
    gives HefError or a HefInfo, quickly; never another exception."""
    _, path = real
    data = path.read_bytes()
    h = read_hef(data).header
    lo, hi = h.header_size, h.header_size + h.proto_size
    rng = random.Random(zlib.crc32(path.name.encode()))
    budget = time.perf_counter() + 0.4
    n = errors = 0
    # Small protos near the start matter most (the layer metadata sits in the last part of big ones).
    while time.perf_counter() < budget or n < 5:
        buf = bytearray(data[:hi])  # the CCWS is not read with verify_checksum=False; keep the size right
        for _ in range(rng.randint(1, 4)):
            pos = rng.choice([rng.randrange(lo, hi), rng.randrange(max(lo, hi - 4096), hi)])
            buf[pos] = rng.randrange(256)
        t0 = time.perf_counter()
        try:
            read_hef(bytes(buf) + data[hi:], verify_checksum=False)
        except HefError:
            errors += 1
        assert time.perf_counter() - t0 < HANG_SECONDS
        n += 1
    assert n >= 5


# ---------------------------------------------------------------------------------------------
# Writer-built files: round trip
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_writer_roundtrip(version):
    data = w.yolov8_hef(version)
    info = read_hef(data)
    h = info.header
    assert h.version == version and h.header_size == {0: 32, 1: 28, 2: 44, 3: 56}[version]
    assert h.file_size == len(data) and h.checksum_ok in ((True,) if version < 2 else (True, None))
    assert info.hw_arch_name == "HAILO8" and info.sdk_version == "3.31.0"
    assert "HAILO_NET_FLOW_YOLOV8_NMS" in info.extension_names and "OUTPUT_SCALE_PER_FEATURE" in info.extension_names
    ng = info.network_group()
    assert ng.name == "yolov8n" and ng.networks == ("yolov8n/yolov8n",) and ng.contexts == 1
    layers = {l.name: l for l in w.yolov8_layers()}
    assert [i.name for i in ng.inputs] == ["yolov8n/input_layer1"]
    # vstream order follows sorted_outputs_order (the writer reverses the file order)
    assert [o.name for o in ng.outputs] == [l.name for l in w.yolov8_layers() if l.output][::-1]
    for o in ng.outputs:
        src = layers[o.name]
        assert o.shape == src.shape and o.padded_shape == (src.padded or src.shape)
        assert o.device_order == src.order and o.format_code == w.CODE[src.order]
        assert o.host_order == {"NHCW": "NHWC"}.get(src.order, src.order)
        assert o.bytes_per_element == src.data_bytes and o.dtype == ("uint8", "uint16")[src.data_bytes - 1]
        assert o.qp_zp == np.float32(src.zp) and o.qp_scale == np.float32(src.scale)
        assert o.pad_index == src.pad_index
        if src.zps:
            assert o.per_feature and o.qp_zps == tuple(src.zps) and o.qp_scales == tuple(src.scales)
            assert o.zp == tuple(src.zps) and o.scale == tuple(src.scales)
        else:
            assert not o.per_feature and o.qp_zps is None and o.zp == o.qp_zp
    nms = ng.nms
    assert nms is not None and ng.ops[0].kind == "yolov8"
    assert (nms.score_threshold, nms.iou_threshold, nms.max_proposals_per_class, nms.classes) == (0.2, 0.7, 100, 80)
    assert (nms.image_height, nms.image_width, nms.regression_length) == (640.0, 640.0, 16)
    assert [(d.stride, d.reg_layer, d.cls_layer) for d in nms.bbox_decoders] == [
        (8, "yolov8n/conv41", "yolov8n/conv42"), (16, "yolov8n/conv52", "yolov8n/conv53"),
        (32, "yolov8n/conv62", "yolov8n/conv63")]
    assert nms.output_name == "yolov8_nms_postprocess"
    d = info.to_dict()
    json.dumps(d)
    assert d["network_groups"][0]["outputs"][0]["vstream_shape"] == [20, 20, 80]


@pytest.mark.parametrize("style,partial,arch", [("ops", False, "HAILO8"), ("legacy", False, "HAILO8"),
                                                ("ops", True, "HAILO8L"), ("legacy", True, "HAILO8L")])
def test_writer_layouts(style, partial, arch):
    """New (ops[].core_op) and legacy network groups; Hailo-8L HEFs keep the layers in partial
    layout 0 (HailoRT reads that one)."""
    layers = w.yolov8_layers(3)
    ng_bytes = w.network_group("net", layers, nms=w.yolov8_nms(3) if style == "ops" else None, style=style,
                               partial=partial)
    info = read_hef(w.wrap(w.hef_proto([ng_bytes], hw_arch=arch, extensions=(0, 13, 25)), 1))
    ng = info.network_groups[0]
    assert ng.name == "net" and ng.partial_layout is partial
    assert len(ng.outputs) == 6 and len(ng.inputs) == 1
    assert (ng.nms is not None) is (style == "ops")
    cfg = config_from_hef(info)
    assert cfg.num_classes == 3 and [h.stride for h in cfg.heads] == [8, 16, 32]


def test_writer_multi_context_and_multi_group():
    layers = w.yolov8_layers(3, "a")
    g0 = w.network_group("a", layers, contexts=3, index=0)
    g1 = w.network_group("b", w.yolov8_layers(5, "b"), nms=w.yolov8_nms(5), index=1, style="ops")
    info = read_hef(w.wrap(w.hef_proto([g0, g1]), 2))
    a, b = info.network_groups
    assert a.contexts == 3 and "a/intermediate" not in [o.name for o in a.outputs] + [i.name for i in a.inputs]
    assert {o.context_index for o in a.outputs} == {0, 2} and len(a.outputs) == 6
    assert info.network_group("b") is b and info.network_group(1) is b and info.network_group() is a
    assert config_from_hef(info, "b").num_classes == 5
    assert config_from_hef(info, 0).num_classes == 3
    with pytest.raises(ValueError, match="no network group 'c'"):
        config_from_hef(info, "c")
    with pytest.raises(KeyError):
        info.network_group(7)


def test_writer_mux_transposed_and_pad_edges():
    mux = w.mux_edge_layer("net/mux", [w.Layer("net/m0", (10, 10, 4)), w.Layer("net/m1", (10, 10, 8), "NHCW",
                                                                                data_bytes=2)], (10, 10, 12))
    layers = [w.Layer("net/in", (32, 32, 3), output=False), w.Layer("net/t", (4, 6, 16), "FCR", transposed=True,
                                                                     pad_index=3)]
    ng = w.network_group("net", layers, extra_edges=[mux])
    info = read_hef(w.wrap(w.hef_proto([ng]), 0))
    out = {o.name: o for o in info.network_groups[0].outputs}
    assert out["net/m0"].mux == "net/mux" and out["net/m1"].dtype == "uint16" and "net/mux" not in out
    assert out["net/t"].transposed and out["net/t"].shape == (6, 4, 16)
    # bbox decoders that name the NMS op's own input pads resolve through the pad edges
    nms = w.Yolov8Nms([w.Decoder(8, 110, 111), w.Decoder(16, 112, 113), w.Decoder(32, 114, 115)], classes=80)
    g = w.network_group("yolov8n", w.yolov8_layers(), nms=nms)
    # pad edges: core output pads 10..15 -> NMS input pads 110..115 (ProtoHEFPadEdge src 1, dst 2)
    g += b"".join(w.msg(9, w.uint(1, 10 + k, keep_zero=True), w.uint(2, 110 + k)) for k in range(6))
    info = read_hef(w.wrap(w.hef_proto([g]), 1))
    assert [d.reg_layer for d in info.network_groups[0].nms.bbox_decoders] == [
        "yolov8n/conv41", "yolov8n/conv52", "yolov8n/conv62"]


def test_writer_unresolved_decoder_pads():
    nms = w.Yolov8Nms([w.Decoder(8, 10, 99)], classes=80)
    info = read_hef(w.wrap(w.hef_proto([w.network_group("yolov8n", w.yolov8_layers(), nms=nms)]), 1))
    d = info.network_groups[0].nms.bbox_decoders[0]
    assert d.reg_layer == "yolov8n/conv41" and d.cls_layer is None
    with pytest.raises(ValueError, match="not outputs"):
        config_from_hef(info)


def test_core_hw_padding_rule():
    """NHCW boundary outputs whose padding HailoRT strips itself report hw_shape = shape, unless the
    DFC configured the padding (optional extension HW_PADDING)."""
    layer = w.Layer("n/o", (20, 20, 64), "NHCW", padded=(20, 24, 64), pad_index=1, core_buffers_per_frame=20)
    other = w.Layer("n/p", (20, 20, 64), "NHCW", padded=(20, 24, 64), pad_index=2, core_buffers_per_frame=5)
    ng = w.network_group("n", [layer, other])
    o1, o2 = read_hef(w.wrap(w.hef_proto([ng]), 1)).network_groups[0].outputs
    assert o1.hw_shape == (20, 20, 64) and o1.padded_shape == (20, 24, 64)
    assert o2.hw_shape == (20, 24, 64)
    o1, _ = read_hef(w.wrap(w.hef_proto([ng], optional_extensions=(11,)), 1)).network_groups[0].outputs
    assert o1.hw_shape == (20, 24, 64)


def test_per_feature_needs_the_extension():
    info = read_hef(w.yolov8_hef(1, per_feature=False))
    o = info.network_groups[0].output("yolov8n/conv63")
    assert o.qp_zps is not None and not o.per_feature and o.zp == o.qp_zp
    cfg = config_from_hef(info)
    assert cfg.output("yolov8n/conv63").zp == 0.0


def test_file_object_and_path(tmp_path):
    data = w.yolov8_hef(3)
    p = tmp_path / "m.hef"
    p.write_bytes(data)
    assert read_hef(p).path == str(p)
    assert read_hef(str(p)).network_groups == read_hef(io.BytesIO(data)).network_groups == read_hef(data).network_groups
    assert read_hef(bytearray(data)).header == read_hef(memoryview(data)).header
    with pytest.raises(TypeError):
        read_hef(12)


# ---------------------------------------------------------------------------------------------
# config_from_hef builds a working decoder
# ---------------------------------------------------------------------------------------------
def _host_frame(cfg, rng, hot=30):
    """Random host buffers: box logits anywhere, class scores mostly under the threshold, a few hot cells."""
    raw = {}
    cls_names = {h.cls for h in cfg.heads}
    for o in cfg.outputs:
        top = 255 if o.dtype == "uint8" else 65535
        if o.name in cls_names:
            a = rng.integers(0, top // 8, size=o.shape)
            for _ in range(hot):
                a[rng.integers(o.shape[0]), rng.integers(o.shape[1]), rng.integers(o.shape[2])] = rng.integers(
                    top // 2, top + 1)
        else:
            a = rng.integers(0, top + 1, size=o.shape)
        raw[o.name] = np.ascontiguousarray(a.astype(o.dtype))
    return raw


def _to_device(a, o, rng):
    """Host (H, W, C) -> the raw device buffer of `o` (device order, padded, 8-byte rounded), with
    garbage in the padding."""
    h, w_, c = o.shape
    hp, wp, cp = o.padded_shape
    top = 255 if o.dtype == "uint8" else 65535
    full = rng.integers(0, top + 1, size=(hp, wp, cp)).astype(o.dtype)
    full[:h, :w_, :c] = a
    if o.order in ("NHWC", "FCR"):
        flat = full.reshape(-1)
    elif o.order == "NHCW":
        flat = full.transpose(0, 2, 1).reshape(-1)
    elif o.order == "F8CR":
        flat = full.reshape(hp, wp, cp // 8, 8).transpose(0, 2, 1, 3).reshape(-1)
    else:
        raise AssertionError(o.order)
    out = np.zeros(o.frame_elements, dtype=o.dtype)
    out[:flat.size] = flat
    return out


def test_config_from_hef_decodes_host_and_device_buffers():
    data = w.yolov8_hef(1)
    cfg = config_from_hef(data)
    assert [h.stride for h in cfg.heads] == [8, 16, 32] and cfg.image_size == (640, 640)
    assert cfg.score_threshold == float(np.float32(0.2)) and cfg.iou_threshold == float(np.float32(0.7))
    assert cfg.max_per_class == 100 and cfg.class_activation == "none"
    by = {o.name: o for o in cfg.outputs}
    assert by["yolov8n/conv42"].order == "NHWC" and by["yolov8n/conv41"].order == "FCR"
    assert by["yolov8n/conv52"].order == "F8CR" and by["yolov8n/conv53"].dtype == "uint16"
    assert isinstance(by["yolov8n/conv63"].scale, tuple) and len(by["yolov8n/conv63"].scale) == 80
    dev = config_from_hef(data, device_buffers=True)
    dby = {o.name: o for o in dev.outputs}
    assert dby["yolov8n/conv53"].order == "NHCW" and dby["yolov8n/conv53"].padded_shape == (40, 48, 80)
    assert dby["yolov8n/conv52"].padded_shape == (40, 48, 64) and all(o.device for o in dev.outputs)

    rng = np.random.default_rng(7)
    raw = _host_frame(cfg, rng)
    dets = hd.Decoder(cfg)(raw)
    assert len(dets) > 0 and dets.boxes.shape[1] == 4
    assert np.all(dets.scores >= np.float32(0.2))
    device_raw = {name: _to_device(a, dby[name], rng) for name, a in raw.items()}
    dets_dev = hd.Decoder(dev)(device_raw)
    np.testing.assert_array_equal(dets_dev.boxes, dets.boxes)
    np.testing.assert_array_equal(dets_dev.scores, dets.scores)
    np.testing.assert_array_equal(dets_dev.class_ids, dets.class_ids)
    # a batch of two, as InferVStreams hands it out
    batch = {k: np.stack([v, v]) for k, v in raw.items()}
    assert len(hd.Decoder(cfg)(batch)) == 2


def test_config_from_hef_settings():
    data = w.yolov8_hef(0, classes=4, score_th=0.35, iou_th=0.5, max_per_class=7, image_hw=(480.0, 640.0))
    # The op's image size, read height first, is not its strides x grids (640x640, the input's):
    # every preset decodes by the input's size (stride x grid = image size) and warns.
    with pytest.warns(hd.HefMismatchWarning, match="says image 640x480"):
        assert config_from_hef(data).image_size == (640, 640)
    with pytest.raises(ValueError, match=r"stride 8 x grid \(80, 80\) is \(640, 640\), not the image size \(480, 640\)"):
        config_from_hef(data, image_size=(480, 640))
    cfg = config_from_hef(data, image_size=(640, 640))
    assert cfg.score_threshold == float(np.float32(0.35)) and cfg.iou_threshold == float(np.float32(0.5))
    assert cfg.max_per_class == 7 and cfg.image_size == (640, 640) and cfg.num_classes == 4
    with pytest.warns(hd.HefMismatchWarning, match="normalizes by the input's 640x640"):
        cfg = config_from_hef(data, score_threshold=0.6, semantics="ultralytics", class_activation="sigmoid")
    assert cfg.score_threshold == 0.6 and cfg.semantics == "ultralytics" and cfg.class_activation == "sigmoid"
    assert cfg.image_size == (640, 640)
    assert cfg.iou_threshold == float(np.float32(0.5))  # from the HEF; the preset fills only the rest
    wrong = w.Yolov8Nms(w.yolov8_nms(4).decoders, classes=80)
    with pytest.raises(ValueError, match="says 80 classes"):
        config_from_hef(w.wrap(w.hef_proto([w.network_group("yolov8n", w.yolov8_layers(4), nms=wrong)]), 1))


def test_config_without_nms_pairs_by_shape():
    info = read_hef(w.yolov8_hef(2, nms=False, classes=5))
    assert info.network_groups[0].nms is None
    cfg = config_from_hef(info)
    assert cfg.num_classes == 5 and [h.box for h in cfg.heads] == ["yolov8n/conv41", "yolov8n/conv52", "yolov8n/conv62"]
    assert cfg.score_threshold == 0.2 and cfg.max_per_class == 100  # the hailort preset
    raw = _host_frame(cfg, np.random.default_rng(1))
    assert isinstance(hd.Decoder(cfg)(raw), hd.Detections)


def test_class_activation_from_quantization():
    """Scores quantized over [0, 1] mean a sigmoid on the chip; logits need one on the host."""
    scores = config_from_hef(w.yolov8_hef(1, classes=3, nms=False))
    assert scores.class_activation == "none"
    # the Ultralytics preset would apply a sigmoid; the chip already did
    ultra = config_from_hef(w.yolov8_hef(1, classes=3, nms=False), semantics="ultralytics")
    assert ultra.class_activation == "none" and ultra.score_threshold == 0.25
    assert ultra.replace(semantics="hailort").class_activation == "none"
    logits = config_from_hef(w.yolov8_hef(1, classes=3, nms=False, logits=True))
    assert logits.class_activation == "sigmoid" and logits.semantics == "hailort"
    assert config_from_hef(w.yolov8_hef(1, classes=3, logits=True), class_activation="none").class_activation == "none"
    ng = read_hef(w.yolov8_hef(1, classes=3, logits=True)).network_groups[0]
    act, why = H.infer_class_activation([ng.output("yolov8n/conv42"), ng.output("yolov8n/conv63")])
    assert act == "sigmoid" and "logits" in why
    relu = H.HefLayer("x", "output", (2, 2, 3), (2, 2, 3), (2, 2, 3), 0, "NHWC", "NHWC", 1, "uint8", 0.0, 0.1)
    assert H.infer_class_activation([relu])[0] is None and H.class_range(relu) == (0.0, 25.5)


def test_device_buffers_refuses_what_has_no_raw_buffer():
    mux = w.mux_edge_layer("n/mux", [w.Layer("n/m0", (10, 10, 64)), w.Layer("n/m1", (10, 10, 3))], (10, 10, 67))
    info = read_hef(w.wrap(w.hef_proto([w.network_group("n", [], extra_edges=[mux])]), 1))
    assert config_from_hef(info).num_classes == 3
    with pytest.raises(ValueError, match="demuxed"):
        config_from_hef(info, device_buffers=True)


# ---------------------------------------------------------------------------------------------
# Malformed files
# ---------------------------------------------------------------------------------------------
def _proto_file(proto: bytes, version: int = 1) -> bytes:
    return w.wrap(proto, version)


def _ng_with(edge: bytes, name: str = "n") -> bytes:
    return w.hef_proto([w.network_group(name, [], extra_edges=[edge])], unknown_fields=False)


@pytest.mark.parametrize("data,match", [
    (b"", "shorter than a HEF header"),
    (b"\x01HEF", "shorter than a HEF header"),
    (b"\x01HEF" + b"\0" * 8, "truncated HEF"),
    (b"PK\x03\x04" + b"\0" * 60, "magic is 50 4b 03 04"),
    (b"\x01HEF\0\0\0\x07" + b"\0" * 60, "unsupported HEF header version 7"),
    (b"\x01HEF\0\0\0\x00\0\0\0\0" + b"\0" * 20, "proto size 0"),
    (b"\x01HEF\0\0\0\x01\xff\xff\xff\xff" + b"\0" * 40, "only 24 follow"),
    (b"\x01HEF\0\0\0\x01\0\0\0\x04" + b"\0\0\0\0" + struct.pack(">Q", 1 << 60) + b"\0" * 8, "declares"),
    (b"\x01HEF\0\0\0\x03\0\0\0\x04" + b"\0" * 8 + struct.pack(">QI", 4, 9) + b"\0" * 28, "padding size 9"),
])
def test_bad_headers(data, match):
    with pytest.raises(HefError, match=match):
        read_hef(data)


def test_bad_protobuf():
    good_edge = w.edge_layer(w.Layer("n/o", (4, 4, 8), pad_index=0))
    cases = {
        "varint longer than 10": b"\x12" + b"\xff" * 11,
        "varint runs past": b"\x12\xff",
        "says 1152921504606846976 bytes": b"\x12" + w.enc_varint(1 << 60),
        "invalid wire type 7": b"\x0f",
        "invalid wire type 3": b"\x13",
        "field number 0": b"\x00\x01",
        "needs 8 bytes": b"\x09\x01\x02",
        "no network group": w.ln(1, w.string(3, "sdk")),
        "wire type 0, the schema says 2": w.uint(2, 5),
        "not valid UTF-8": w.msg(2, w.ln(10, b"\xff\xfe")),
        "no output layer": w.hef_proto([w.network_group("n", [w.Layer("n/in", (2, 2, 3), output=False)])]),
        "without edge_layer_base": _ng_with(w.uint(1, 1) + w.msg(3, w.string(1, "n/x"))),
        "edge layer without a name": _ng_with(w.uint(1, 1) + w.msg(3, w.msg(2, w.uint(1, 4)))),
        "packed doubles": _ng_with(w.uint(1, 1) + w.msg(3, w.string(1, "n/x"), w.msg(2, w.uint(1, 1)),
                                                      w.msg(3, w.ln(5, b"\0" * 12)))),
        "3 qp_zps for 8 features": w.hef_proto([w.network_group("n", [w.Layer("n/o", (4, 4, 8), zps=[1.0, 2, 3])])],
                                               extensions=(25,)),
        "has no contexts": w.msg(2, w.string(10, "n")),
        "network group 0 has no name": w.msg(2, w.uint(11, 1)),
    }
    for match, proto in cases.items():
        with pytest.raises(HefError, match=match):
            read_hef(_proto_file(proto))
    read_hef(_proto_file(_ng_with(good_edge)))  # the base the edge cases start from is fine


def test_deep_nesting_is_capped():
    base = w.msg(2, w.edge_layer_base(w.Layer("x", (2, 2, 8))))
    edge = w.msg(1, w.layer_info(w.Layer("n/leaf", (2, 2, 8))))   # ProtoHefEdge { layer_info }
    mux = b""
    for k in range(200):  # mux in mux in mux ...: ProtoHefEdge { layer_mux { predecessors [ProtoHefEdge] } }
        mux = w.string(1, f"n/mux{k}") + base + w.msg(5, edge)
        edge = w.msg(2, mux)
    edge_layer = w.uint(1, 1) + w.uint(2, 1) + w.msg(4, mux)
    shallow = w.uint(1, 1) + w.uint(2, 1) + w.msg(4, w.string(1, "n/mux") + base + w.msg(5, w.msg(2, w.string(
        1, "n/mux2") + base + w.msg(5, w.msg(1, w.layer_info(w.Layer("n/leaf", (2, 2, 8))))))))
    assert [o.name for o in read_hef(_proto_file(_ng_with(shallow))).network_groups[0].outputs] == ["n/leaf"]
    edge = edge_layer
    t0 = time.perf_counter()
    with pytest.raises(HefError):
        read_hef(_proto_file(_ng_with(edge)))
    assert time.perf_counter() - t0 < HANG_SECONDS


def test_truncated_at_every_offset():
    data = w.yolov8_hef(1, classes=3)
    t0 = time.perf_counter()
    for cut in range(len(data)):
        with pytest.raises(HefError):
            read_hef(data[:cut])
    assert time.perf_counter() - t0 < 4 * HANG_SECONDS


@pytest.mark.parametrize("version,kind", [(0, "md5"), (1, "crc32"), (2, "xxh3_64"), (3, "xxh3_64")])
def test_writer_file_corruption_and_checksum(version, kind):
    data = bytearray(w.yolov8_hef(version, classes=3))
    assert read_hef(bytes(data)).header.checksum_kind == kind
    data[data.index(b"conv52")] ^= 1  # 'c' -> 'b' in a layer name: still a valid protobuf
    if version >= 2 and read_hef(bytes(data), verify_checksum=False) and _xxhash_missing():
        assert read_hef(bytes(data)).header.checksum_ok is None
        return
    with pytest.raises(HefError, match=f"{kind} checksum"):
        read_hef(bytes(data))
    names = [o.name for o in read_hef(bytes(data), verify_checksum=False).network_groups[0].outputs]
    assert "yolov8n/bonv52" in names


def _xxhash_missing() -> bool:
    try:
        import xxhash  # noqa: F401
    except ImportError:
        return True
    return False


def _read_or_error(data: bytes) -> None:
    t0 = time.perf_counter()
    try:
        info = read_hef(data, verify_checksum=False)
    except HefError:
        return
    finally:
        assert time.perf_counter() - t0 < HANG_SECONDS
    assert isinstance(info, H.HefInfo)
    json.dumps(info.to_dict())
    try:
        config_from_hef(info)
    except ValueError:
        pass
    for ng in info.network_groups:
        format_report(inspect_report(info, ng.name))


@FUZZ
@given(st.binary(max_size=512))
def test_fuzz_random_bytes(data):
    with pytest.raises(HefError):
        read_hef(data)


@FUZZ
@given(st.binary(max_size=2048), st.sampled_from([0, 1, 2, 3]))
def test_fuzz_random_proto(proto, version):
    _read_or_error(w.wrap(proto, version) if proto else b"\x01HEF\0\0\0\0\0\0\0\0" + b"\0" * 20)


_BASE = w.yolov8_hef(3, classes=3)
_PROTO = (56, 56 + struct.unpack_from(">I", _BASE, 8)[0])


@pytest.mark.filterwarnings("ignore::hailo_decode.HefMismatchWarning")  # mutated files disagree with themselves
@FUZZ
@given(st.lists(st.tuples(st.integers(*_PROTO).map(lambda p: min(p, _PROTO[1] - 1)), st.integers(0, 255)),
                min_size=1, max_size=6))
def test_fuzz_mutated_writer_file(mutations):
    buf = bytearray(_BASE)
    for pos, value in mutations:
        buf[pos] = value
    _read_or_error(bytes(buf))


@FUZZ
@given(st.integers(56, len(_BASE)), st.binary(min_size=1, max_size=16))
def test_fuzz_inserted_bytes(pos, junk):
    # inserting changes the size: the header no longer matches
    with pytest.raises(HefError):
        read_hef(_BASE[:pos] + junk + _BASE[pos:], verify_checksum=False)


# ---------------------------------------------------------------------------------------------
# inspect
# ---------------------------------------------------------------------------------------------
def _run_inspect(argv, capsys):
    rc = cli_main(["inspect", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_inspect_real_file(capsys):
    path = _real_path("scrfd_2.5g_h10h_v3hdr.hef")
    rc, out, _ = _run_inspect([str(path)], capsys)
    assert rc == 0
    assert "Architecture HEF was compiled for: HAILO1XH" in out
    assert "Network group name: scrfd_2_5g, Single Context" in out
    assert "Output scrfd_2_5g/conv43 UINT8, NHWC(80x80x8)" in out          # vstream: host order
    assert "Output scrfd_2_5g/conv43 UINT8, NHCW(80x80x8)  [format code 1]" in out  # stream: device order
    assert "scrfd_2_5g/conv44  zp 121, scale 0.0261405" in out
    assert "Decoder configuration:\n        none: scrfd_2_5g: no YOLOv8 decoder for this HEF's 9 outputs" in out
    rc, out, _ = _run_inspect([str(path), "--json"], capsys)
    rep = json.loads(out)
    ng = rep["network_groups"][0]
    assert rep["header"]["version"] == 3 and rep["hw_arch"] == "HAILO1XH"
    assert len(ng["outputs"]) == 9 and ng["decoder"] is None and "cannot pair" in ng["decoder_error"]
    assert ng["outputs"][0]["device_order"] == "NHCW" and ng["outputs"][0]["host_order"] == "NHWC"
    hand = _real_path("hand_landmark_lite_h8.hef")
    rc, out, _ = _run_inspect([str(hand)], capsys)
    assert "Output hand_landmark_lite/fc1 UINT8, NC(63)" in out and "NC(1x1x63), padded 1x1x64" in out


def test_inspect_writer_yolov8(tmp_path, capsys):
    p = tmp_path / "yolov8n.hef"
    p.write_bytes(w.yolov8_hef(1))
    rc, out, _ = _run_inspect([str(p)], capsys)
    assert rc == 0
    assert ("Output yolov8_nms_postprocess FLOAT32, HAILO NMS BY CLASS(number of classes: 80, maximum bounding "
            "boxes per class: 100, maximum frame size: 160320)") in out
    assert "Op YOLOV8" in out and "Score threshold: 0.200" in out and "IoU threshold: 0.70" in out
    assert "Bbox decoder: stride 16, reg yolov8n/conv52 (pad 12), cls yolov8n/conv53 (pad 13)" in out
    assert "Output yolov8n/conv53 UINT16, NHCW(40x40x80), padded 40x48x80  [format code 1]" in out
    assert "yolov8n/conv63  per feature (80)" in out
    assert "80 classes, 16 DFL bins, input 640x640 (w x h), heads from the HEF's YOLOv8 NMS op" in out
    assert "yolov8n/conv53: uint16 NHWC(40x40x80)" in out
    assert "class activation: class outputs are quantized over [0, 1]: sigmoid scores computed on the chip" in out
    rc, out, _ = _run_inspect([str(p), "--json", "--device-buffers"], capsys)
    rep = json.loads(out)
    cfg = rep["network_groups"][0]["decoder"]
    assert cfg["num_classes"] == 80 and [h["stride"] for h in cfg["heads"]] == [8, 16, 32]
    dev = {o["name"]: o for o in cfg["outputs"]}
    assert dev["yolov8n/conv53"]["order"] == "NHCW" and dev["yolov8n/conv53"]["padded_shape"] == [40, 48, 80]
    assert rep["network_groups"][0]["nms"]["bbox_decoders"][0]["cls_layer"] == "yolov8n/conv42"
    # errors
    rc, _, err = _run_inspect([str(tmp_path / "missing.hef")], capsys)
    assert rc == 2 and "missing.hef: no such file" in err
    bad = tmp_path / "bad.hef"
    bad.write_bytes(b"\x01HEF\0\0\0\x09" + b"\0" * 64)
    rc, _, err = _run_inspect([str(bad)], capsys)
    assert rc == 2 and "unsupported HEF header version 9" in err


def test_inspect_frames_diagnosis(tmp_path, capsys):
    p = tmp_path / "yolov8n.hef"
    p.write_bytes(w.yolov8_hef(1, classes=3))
    cfg = config_from_hef(p)
    rng = np.random.default_rng(3)
    raw = _host_frame(cfg, rng)
    raw["yolov8n/conv42"][:40] = 255                 # half the stride-8 class values saturate
    raw["yolov8n/conv41"][:] = 0                     # box logits clipped at the minimum
    npz = tmp_path / "dump.npz"
    np.savez(npz, **{k.split("/")[-1]: np.stack([v, v]) for k, v in raw.items()})  # keys without the prefix
    rc, out, err = _run_inspect([str(p), "--frames", str(npz)], capsys)
    assert rc == 0, err
    assert "Recorded frames:" in out
    assert "yolov8n/conv42 (cls, 2 frame(s)); at 0:" in out
    assert "warning: class scores saturate: 50.00% of the values sit at the quantized maximum (255)" in out
    assert "of the box values sit at the quantized minimum (0)" in out
    rc, out, _ = _run_inspect([str(p), "--frames", str(npz), "--json"], capsys)
    diag = {d["name"]: d for d in json.loads(out)["diagnosis"]}
    assert diag["yolov8n/conv42"]["share_at_max"] == pytest.approx(0.5, abs=0.01)
    assert diag["yolov8n/conv41"]["share_at_min"] == 1.0
    # the same numbers from raw device buffers
    dev = config_from_hef(p, device_buffers=True)
    dby = {o.name: o for o in dev.outputs}
    host = diagnose_outputs(cfg, raw)
    device = diagnose_outputs(dev, {k: _to_device(v, dby[k], rng) for k, v in raw.items()})
    for a, b in zip(host, device):
        assert {k: v for k, v in a.items()} == {k: v for k, v in b.items()}
    # sigmoid scores in [0, 1]: no logits warning
    assert all("look like logits" not in wn for d in host for wn in d["warnings"])
    rc, _, err = _run_inspect([str(p), "--frames", str(tmp_path / "nope.npz")], capsys)
    assert rc == 2


def test_diagnose_logits_warning():
    info = read_hef(w.yolov8_hef(1, classes=3, nms=False))
    cfg = config_from_hef(info)
    raw = _host_frame(cfg, np.random.default_rng(5))
    # pretend the class outputs are logits quantized around zero
    cfg2 = hd.DecoderConfig([o if o.name not in {h.cls for h in cfg.heads} else
                             hd.OutputInfo(o.name, o.shape, o.dtype, o.order, zp=128.0, scale=0.05)
                             for o in cfg.outputs], cfg.heads)
    d = {x["name"]: x for x in diagnose_outputs(cfg2, raw)}
    assert any("look like logits" in wn for wn in d["yolov8n/conv42"]["warnings"])
    d = {x["name"]: x for x in diagnose_outputs(cfg2.replace(class_activation="sigmoid"), raw)}
    assert 0 < d["yolov8n/conv42"]["score_min"] < d["yolov8n/conv42"]["score_max"] < 1


def test_inspect_registered_in_cli(tmp_path, capsys):
    p = tmp_path / "m.hef"
    p.write_bytes(w.yolov8_hef(1, classes=3))
    rc = cli_main(["inspect", str(p), "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["network_groups"][0]["decoder"]["num_classes"] == 3


def test_decoder_config_from_hef_classmethod(tmp_path):
    """DecoderConfig.from_hef reads a file with a YOLOv8 NMS op: heads, thresholds, image size."""
    path = tmp_path / "yolov8n.hef"
    path.write_bytes(w.yolov8_hef(0, classes=4, score_th=0.35, iou_th=0.5, max_per_class=7, image_hw=(480.0, 640.0)))
    with pytest.warns(hd.HefMismatchWarning, match="normalizes by the input's 640x640"):
        hd.DecoderConfig.from_hef(path)  # the op's image size does not fit its strides and grids
    cfg = hd.DecoderConfig.from_hef(path, image_size=(640, 640))
    assert cfg.num_classes == 4 and cfg.max_per_class == 7 and cfg.image_size == (640, 640)
    assert abs(cfg.score_threshold - 0.35) < 1e-6 and abs(cfg.iou_threshold - 0.5) < 1e-6
    assert [h.stride for h in cfg.heads] == [8, 16, 32]
    dec = hd.Decoder(cfg)
    raw = {o.name: np.zeros(o.frame_shapes[0], o.dtype) for o in cfg.outputs}
    assert len(dec(raw)) == 0
    assert hd.read_hef(path).network_groups[0].nms.classes == 4
