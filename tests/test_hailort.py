"""hailo_decode.hailort against a test double of HailoRT's Python package (tests/fake_hailo_platform,
put on sys.path only by the `hp` fixture), fed with the real model outputs shipped in the package.

Every result is compared with decoding the same arrays directly with hd.Decoder, and for the real
frames with the demo's expected detections (9 over 5 frames at 0.25 with sigmoid on the host)."""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import hailort
from conftest import assert_same_detections, FAKE_ROOT, FAKE_ROOT_52, HEAD_KEYS, _drop_hailo_platform, _use_double, \
    demo_config, uint8_frames

NET = "fall"
NMS_NAME = f"{NET}/yolov8_nms_postprocess"
ORDER = {"box": "FCR", "cls": "NHWC"}  # as a YOLOv8 HEF reports them: box tensors FCR, class tensors NHWC
DEMO_TOTAL = 9  # the model's own count at conf 0.25 (tests/fixtures/README.md)


# -- the double ------------------------------------------------------------------------------------

@pytest.fixture(params=["4.23", "5.2"])
def hp(request, monkeypatch):
    """Every test here runs under both doubles: HailoRT 4.23's pyhailort and 5.2's (no
    HAILO_DISABLE_PP, a device with configure()), where the adapters must behave alike."""
    yield from _use_double(monkeypatch, FAKE_ROOT if request.param == "4.23" else FAKE_ROOT_52)




@pytest.fixture
def no_hef_reader(monkeypatch):
    """Makes the hailo_decode.hef hook unavailable (the double's HEF paths are not files)."""
    monkeypatch.setattr(hailort, "_hef_module", lambda: None)


def _fd():
    from hailo_platform import _fake_device
    return _fake_device


def _pyhailort():
    from hailo_platform.pyhailort import pyhailort
    return pyhailort


def _outputs(data, dtype="uint8", quant=None, orders=ORDER):
    """FakeOutputs for the six heads: zp/scale from the fixture (or quant[key])."""
    fd = _fd()
    outs = []
    for box, cls, _ in HEAD_KEYS:
        for key, role in ((box, "box"), (cls, "cls")):
            zp, scale = quant[key] if quant else (float(data[f"zp_{key}"]), float(data[f"scale_{key}"]))
            outs.append(fd.FakeOutput(f"{NET}/{key}", data[key].shape[1:], dtype, orders[role], zp=zp, scale=scale))
    return outs


def _frame_list(frames):
    n = len(next(iter(frames.values())))
    return [{k: v[i] for k, v in frames.items()} for i in range(n)]


def _register(outputs, frames, **kw):
    fd = _fd()
    model = fd.FakeModel(NET, outputs, frames=_frame_list(frames) if isinstance(frames, dict) else frames, **kw)
    return model, fd.register(model)


def _direct_config(outputs, **settings):
    """The config a user would write by hand for the same outputs (quantization as HailoRT
    reports it: float32)."""
    infos = []
    for o in outputs:
        if o.per_channel:
            zp = tuple(float(np.float32(v)) for v in o.zp)
            scale = tuple(float(np.float32(v)) for v in o.scale)
        else:
            zp, scale = float(np.float32(o.zp)), float(np.float32(o.scale))
        infos.append(hd.OutputInfo(o.name, o.shape, o.dtype, o.order, zp=zp, scale=scale))
    heads = [hd.Head(f"{NET}/{b}", f"{NET}/{c}", s) for b, c, s in HEAD_KEYS]
    return hd.DecoderConfig(infos, heads, image_size=(640, 640), **settings)


_same = assert_same_detections


def _close(a, b, atol=1e-4):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        np.testing.assert_array_equal(x.class_ids, y.class_ids)
        np.testing.assert_allclose(x.scores, y.scores, atol=atol)
        np.testing.assert_allclose(x.boxes, y.boxes, atol=atol)


def _dequantize(frames, outputs):
    """What HailoRT hands out for FLOAT32 outputs: (float(q) - qp_zp) * qp_scale in float32."""
    out = {}
    for o in outputs:
        zp = np.asarray(o.zp, dtype=np.float32)
        scale = np.asarray(o.scale, dtype=np.float32)
        out[o.name] = (frames[o.name].astype(np.float32) - zp) * scale
    return out


def _vstream_setup(hp, path, format_type=None):
    hef = hp.HEF(path)
    vdevice = hp.VDevice()
    params = hp.ConfigureParams.create_from_hef(hef, interface=hp.HailoStreamInterface.PCIe)
    ng = vdevice.configure(hef, params)[0]
    in_params = hp.InputVStreamParams.make(ng, format_type=hp.FormatType.UINT8)
    out_params = hp.OutputVStreamParams.make(ng, format_type=format_type)
    return hef, ng, in_params, out_params


def _images(n):
    return np.zeros((n, 640, 640, 3), dtype=np.uint8)


def _inputs(n=None):
    """input_buffers for make_bindings: one image, or n with batch_size=n."""
    return {f"{NET}/input_layer1": _images(1)[0] if n is None else _images(n)}


SIGMOID = dict(class_activation="sigmoid", score_threshold=0.25)  # the demo's model outputs logits


# -- the double is faithful to pyhailort's surface -------------------------------------------------

def test_double_mirrors_pyhailort_surface(hp, uint8_data):
    outputs = _outputs(uint8_data)
    _, path = _register(outputs, uint8_frames(uint8_data))
    hef = hp.HEF(path)
    assert hef.path == path and hef.get_network_group_names() == [NET]
    # Enum values of include/hailo/hailort.h; pybind11 enums are not ints.
    assert [int(getattr(hp.FormatOrder, n)) for n in ("AUTO", "NHWC", "NHCW", "FCR", "F8CR", "NHW", "NC", "NCHW")] \
        == [0, 1, 2, 3, 4, 5, 6, 11]
    assert int(hp.FormatOrder.HAILO_NMS_BY_CLASS) == 22 and int(hp.FormatOrder.HAILO_NMS_BY_SCORE) == 23
    assert [int(hp.FormatType.AUTO), int(hp.FormatType.UINT8), int(hp.FormatType.UINT16),
            int(hp.FormatType.FLOAT32)] == [0, 1, 2, 3]
    assert hp.FormatOrder.FCR != 3 and hp.FormatOrder.FCR.name == "FCR"
    infos = hef.get_output_vstream_infos()
    assert [i.name for i in infos] == [o.name for o in outputs]
    box8 = infos[0]
    assert box8.shape == (80, 80, 64) and box8.format.order == hp.FormatOrder.FCR
    assert box8.format.type == hp.FormatType.UINT8
    assert box8.quant_info.qp_zp == float(uint8_data["zp_box_8"])
    assert box8.quant_info.qp_scale == float(np.float32(uint8_data["scale_box_8"]))
    with pytest.raises(Exception, match="nms_shape"):
        _ = box8.nms_shape
    streams = hef.get_output_stream_infos()
    assert [s.format.order for s in streams[:2]] == [hp.FormatOrder.FCR, hp.FormatOrder.NHCW]  # device orders
    (inp,) = hef.get_input_vstream_infos()
    assert inp.shape == (640, 640, 3)
    # VStream params: user_buffer_format order AUTO, type as asked (HailoRTDefaults::get_vstreams_params)
    _, ng, _, out_params = _vstream_setup(hp, path, hp.FormatType.FLOAT32)
    p = out_params[box8.name]
    assert p.user_buffer_format.type == hp.FormatType.FLOAT32 and p.user_buffer_format.order == hp.FormatOrder.AUTO
    assert ng.name == NET and ng.get_networks_names() == [f"{NET}/{NET}"]
    # InferModel: shape is a list, format a copy, set_format_type changes it
    im = hp.VDevice().create_infer_model(path)
    s = im.output(box8.name)
    assert s.shape == [80, 80, 64] and not s.is_nms
    fmt = s.format
    fmt.type = hp.FormatType.FLOAT32
    assert im.output(box8.name).format.type == hp.FormatType.UINT8
    s.set_format_type(hp.FormatType.FLOAT32)
    assert im.output(box8.name).format.type == hp.FormatType.FLOAT32
    assert [q.qp_zp for q in s.quant_infos] == [box8.quant_info.qp_zp]


def test_double_recv_new_buffer_infer_fresh_arrays(hp, uint8_data):
    frames = uint8_frames(uint8_data)
    _, path = _register(_outputs(uint8_data), frames)
    _, ng, in_params, out_params = _vstream_setup(hp, path)
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        a = pipeline.infer({f"{NET}/input_layer1": _images(2)})
        b = pipeline.infer({f"{NET}/input_layer1": _images(2)})
    name = f"{NET}/box_8"
    assert a[name].shape == (2, 80, 80, 64) and a[name].dtype == np.uint8
    assert not np.shares_memory(a[name], b[name])
    np.testing.assert_array_equal(a[name], frames[name][:2])
    np.testing.assert_array_equal(b[name], frames[name][2:4])
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params) as outs:
        v = outs.get(name)
        with pytest.raises(hp.HailoRTException):
            v.recv()  # nothing sent: HailoRT times out
        ins.get().send(_images(2))
        r1, r2 = v.recv(), v.recv()
        assert r1.shape == (80, 80, 64) and not np.shares_memory(r1, r2)
        np.testing.assert_array_equal(r1, frames[name][4])
        np.testing.assert_array_equal(r2, frames[name][0])  # the double cycles through its frames


# -- config_from_hailo -----------------------------------------------------------------------------

def test_config_from_hef_mixed_fcr_nhwc_batch(hp, uint8_data):
    """FCR box and NHWC class outputs in one model, InferVStreams with a batch of 5: the demo's
    9 detections, identical to decoding the arrays directly."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    hef, ng, in_params, out_params = _vstream_setup(hp, path)
    for source in (hef, ng):
        cfg = hailort.config_from_hailo(source, **SIGMOID)
        assert [o.order for o in cfg.outputs] == ["FCR", "NHWC"] * 3
        assert all(o.dtype == "uint8" for o in cfg.outputs)
        assert [(h.box, h.cls, h.stride) for h in cfg.heads] == [(f"{NET}/{b}", f"{NET}/{c}", s) for b, c, s in HEAD_KEYS]
        assert cfg.image_size == (640, 640) and cfg.class_activation == "sigmoid"
        assert cfg.output(f"{NET}/cls_32").zp == float(uint8_data["zp_cls_32"])
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        results = pipeline.infer({f"{NET}/input_layer1": _images(5)})
    dets = hd.Decoder(cfg)(results)
    _same(dets, hd.Decoder(_direct_config(outputs, **SIGMOID))(frames))
    _same(dets, hd.Decoder(demo_config(uint8_data))(frames))  # NHWC-labelled: same host layout
    assert sum(len(d) for d in dets) == DEMO_TOTAL


def test_config_from_infer_model_and_configured(hp, uint8_data):
    outputs = _outputs(uint8_data)
    _, path = _register(outputs, uint8_frames(uint8_data))
    im = hp.VDevice().create_infer_model(path)
    cfg = hailort.config_from_hailo(im, **SIGMOID)
    with im.configure() as cim:
        cfg2 = hailort.config_from_hailo(cim, **SIGMOID)
    for c in (cfg, cfg2):
        assert c.output_names == tuple(o.name for o in outputs)
        assert c.image_size == (640, 640)
    _same(hd.Decoder(cfg)(uint8_frames(uint8_data)), hd.Decoder(cfg2)(uint8_frames(uint8_data)))


def test_config_from_nms_json_and_output_names(hp, uint8_data):
    outputs = _outputs(uint8_data)
    _, path = _register(outputs, uint8_frames(uint8_data))
    nms_json = {"nms_scores_th": 0.3, "nms_iou_th": 0.6, "image_dims": [640, 640], "max_proposals_per_class": 50,
                "classes": 2, "regression_length": 16,
                "bbox_decoders": [{"stride": s, "reg_layer": b, "cls_layer": c} for b, c, s in reversed(HEAD_KEYS)]}
    cfg = hailort.config_from_hailo(hp.HEF(path), nms_json, class_activation="sigmoid")
    assert [h.stride for h in cfg.heads] == [32, 16, 8]  # the JSON's order
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class) == (0.3, 0.6, 50)
    cfg = hailort.config_from_hailo(hp.HEF(path), output_names=[f"{NET}/box_8", f"{NET}/cls_8"])
    assert cfg.output_names == (f"{NET}/box_8", f"{NET}/cls_8")
    with pytest.raises(ValueError, match="not outputs of this model"):
        hailort.config_from_hailo(hp.HEF(path), output_names=["nope"])
    with pytest.raises(TypeError, match="expected a hailo_platform HEF"):
        hailort.config_from_hailo(object())


def test_uint16_outputs(hp, uint8_data):
    """16-bit layers: uint16 integers with their own zp/scale; same detections as the 8-bit ones."""
    quant, frames16 = {}, {}
    for box, cls, _ in HEAD_KEYS:
        for key in (box, cls):
            zp, scale = float(uint8_data[f"zp_{key}"]), float(uint8_data[f"scale_{key}"])
            quant[key] = (zp * 257, scale / 257)
            frames16[f"{NET}/{key}"] = uint8_data[key].astype(np.uint16) * 257
    outputs = _outputs(uint8_data, "uint16", quant)
    _, path = _register(outputs, frames16)
    im = hp.VDevice().create_infer_model(path)
    cfg = hailort.config_from_hailo(im, **SIGMOID)
    assert all(o.dtype == "uint16" for o in cfg.outputs)
    hb = hailort.make_bindings(hd.Decoder(cfg), im.configure(), batch_size=5, input_buffers=_inputs(5))
    dets = hb.run(1000)
    assert hb.buffers[f"{NET}/box_8"].dtype == np.uint16
    _same(dets, hd.Decoder(_direct_config(outputs, **SIGMOID))(frames16))
    _close(dets, hd.Decoder(demo_config(uint8_data))(uint8_frames(uint8_data)))
    assert sum(len(d) for d in dets) == DEMO_TOTAL


def test_float32_outputs(hp, uint8_data):
    """Outputs requested as FLOAT32 come dequantized: the config says float32, zp 0, scale 1."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    hef, ng, in_params, out_params = _vstream_setup(hp, path, hp.FormatType.FLOAT32)
    cfg = hailort.config_from_hailo(ng, output_params=out_params, **SIGMOID)
    assert [(o.dtype, o.zp, o.scale) for o in cfg.outputs] == [("float32", 0.0, 1.0)] * 6
    assert hailort.config_from_hailo(hef, format_type=hp.FormatType.FLOAT32, **SIGMOID).outputs == cfg.outputs
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        results = pipeline.infer({f"{NET}/input_layer1": _images(5)})
    assert results[f"{NET}/box_8"].dtype == np.float32
    dets = hd.Decoder(cfg)(results)
    floats = _dequantize(frames, outputs)
    float_cfg = hd.DecoderConfig([hd.OutputInfo(o.name, o.shape, "float32", o.order) for o in outputs],
                                 [hd.Head(f"{NET}/{b}", f"{NET}/{c}", s) for b, c, s in HEAD_KEYS], **SIGMOID)
    _same(dets, hd.Decoder(float_cfg)(floats))
    _close(dets, hd.Decoder(demo_config(uint8_data))(frames))
    # A uint8 config on FLOAT32 vstreams is refused by the decoder, not misread.
    with pytest.raises(TypeError, match="expected dtype uint8, got float32"):
        hd.Decoder(hailort.config_from_hailo(ng, **SIGMOID))(results)
    # InferModel: set_format_type(FLOAT32) before configure; the config follows.
    im = hp.VDevice().create_infer_model(path)
    for s in im.outputs:
        s.set_format_type(hp.FormatType.FLOAT32)
    cfg_im = hailort.config_from_hailo(im, **SIGMOID)
    assert cfg_im.outputs == cfg.outputs
    hb = hailort.make_bindings(hd.Decoder(cfg_im), im.configure(), batch_size=5, input_buffers=_inputs(5))
    _same(hb.run(), dets)


def _per_channel(data):
    """Box tensors requantized with one (zp, scale) per channel, class tensors per tensor."""
    quant, frames = {}, {}
    for box, cls, _ in HEAD_KEYS:
        zp, scale = float(data[f"zp_{box}"]), float(data[f"scale_{box}"])
        c = data[box].shape[-1]
        scales = (scale * (1.0 + np.arange(c) / 64)).astype(np.float32)
        zps = np.full(c, zp, dtype=np.float32)
        f = (data[box].astype(np.float32) - np.float32(zp)) * np.float32(scale)
        q = np.clip(np.rint(f / scales + zps), 0, 255).astype(np.uint8)
        quant[box] = (list(map(float, zps)), list(map(float, scales)))
        quant[cls] = (float(data[f"zp_{cls}"]), float(data[f"scale_{cls}"]))
        frames[f"{NET}/{box}"] = q
        frames[f"{NET}/{cls}"] = data[cls]
    return quant, frames


def _write_hef(tmp_path, outputs):
    """A real HEF file for the double's model (tests/hef_writer.py): the same outputs, device
    orders and quantization, per-feature lists with the OUTPUT_SCALE_PER_FEATURE extension; what
    hailo_decode.hef reads when HailoRT's quant_info is all zeros."""
    import hef_writer as w
    layers = [w.Layer(f"{NET}/input_layer1", (640, 640, 3), "NHWC", output=False, scale=1.0, limvals=(0.0, 255.0))]
    for i, o in enumerate(outputs):
        kw = dict(zp=float(o.zp), scale=float(o.scale)) if not o.per_channel else dict(
            zp=0.0, scale=0.0, zps=[q.qp_zp for q in o.quant_infos()], scales=[q.qp_scale for q in o.quant_infos()])
        layers.append(w.Layer(o.name, o.shape, o.device_order, data_bytes=np.dtype(o.dtype).itemsize, pad_index=10 + i,
                              **kw))
    path = tmp_path / f"{NET}.hef"
    path.write_bytes(w.wrap(w.hef_proto([w.network_group(NET, layers)], extensions=[0, 3, 12, 13, 27, 25]), 1))
    return str(path)


def _per_channel_model(hp, data, tmp_path):
    quant, frames = _per_channel(data)
    outputs = _outputs(data, quant=quant)
    fd = _fd()
    path = fd.register(fd.FakeModel(NET, outputs, frames=_frame_list(frames)), _write_hef(tmp_path, outputs))
    return outputs, frames, path


def test_per_feature_quant_infos_hold_one_entry(hp, uint8_data, tmp_path):
    """HailoRT 4.23 (infer_model.cpp, InferStream::Impl::get_quant_infos): InferModel's quant_infos
    is the vstream's single quant_info, all zeros for a per-feature output; the double too."""
    outputs, _, path = _per_channel_model(hp, uint8_data, tmp_path)
    im = hp.VDevice().create_infer_model(path)
    for name in (f"{NET}/box_8", f"{NET}/cls_8"):
        (q,) = im.output(name).quant_infos
        (info,) = [i for i in hp.HEF(path).get_output_vstream_infos() if i.name == name]
        assert (q.qp_zp, q.qp_scale) == (info.quant_info.qp_zp, info.quant_info.qp_scale)
    assert im.output(f"{NET}/box_8").quant_infos[0].qp_scale == 0.0  # INVALID_QUANT_INFO
    assert im.output(f"{NET}/cls_8").quant_infos[0].qp_scale == pytest.approx(float(uint8_data["scale_cls_8"]))


@pytest.mark.parametrize("source", ["hef", "infer_model", "configured_infer_model"])
def test_per_feature_quantization_read_from_the_hef(hp, uint8_data, tmp_path, source):
    """The per-channel values come from the HEF file behind the object (HEF.path, InferModel.hef,
    a ConfiguredInferModel's InferModel), with a HefQuantizationWarning; decoding on the device
    gives the detections of the per-channel arrays decoded directly."""
    outputs, frames, path = _per_channel_model(hp, uint8_data, tmp_path)
    im = hp.VDevice().create_infer_model(path)
    cim = im.configure()
    obj = {"hef": hp.HEF(path), "infer_model": im, "configured_infer_model": cim}[source]
    with pytest.warns(hailort.HefQuantizationWarning, match="per-channel zero points and scales were read from"):
        cfg = hailort.config_from_hailo(obj, **SIGMOID)
    box8 = cfg.output(f"{NET}/box_8")
    (expected,) = [o for o in outputs if o.name == box8.name]
    assert box8.scale == tuple(float(np.float32(v)) for v in expected.scale)
    assert box8.zp == tuple(float(np.float32(v)) for v in expected.zp)
    assert isinstance(cfg.output(f"{NET}/cls_8").scale, float)  # one per tensor stays a scalar
    assert [o.order for o in cfg.outputs] == ["FCR", "NHWC"] * 3  # formats still from the object
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    hb = hailort.make_bindings(hd.Decoder(cfg), cim, batch_size=5, input_buffers=_inputs(5))
    _same(hb.run(), direct)
    _close(direct, hd.Decoder(demo_config(uint8_data))(uint8_frames(uint8_data)), atol=0.02)


def test_per_feature_quantization_hef_path_and_errors(hp, uint8_data, tmp_path, monkeypatch):
    outputs, frames, path = _per_channel_model(hp, uint8_data, tmp_path)
    hef, ng, _, _ = _vstream_setup(hp, path)
    # A network group does not know its file: say what HailoRT reports and what to pass.
    with pytest.raises(ValueError) as e:
        hailort.config_from_hailo(ng, **SIGMOID)
    msg = str(e.value)
    for part in ("fall/box_8", "single quant_info", "all zeros", "hef_path=", "FLOAT32", hp.__version__):
        assert part in msg
    # hef_path= names the file: no warning (with nms_json the rest still comes from the object).
    nms_json = {"bbox_decoders": [{"stride": s, "reg_layer": b, "cls_layer": c} for b, c, s in HEAD_KEYS]}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = hailort.config_from_hailo(ng, nms_json, hef_path=path, class_activation="sigmoid")
    assert len(cfg.output(f"{NET}/box_16").scale) == 64
    # Without the HEF reader: the same facts, and how to get it.
    monkeypatch.setattr(hailort, "_hef_module", lambda: None)
    with pytest.raises(ValueError, match="install hailo_decode.hef"):
        hailort.config_from_hailo(hp.VDevice().create_infer_model(path), **SIGMOID)
    # A per-feature HEF whose lists are empty: HailoRT 4.23 does not load it (hef.cpp at v4.23.0,
    # fill_layer_info), so neither is it read here (5.x takes the scalars: test_hailort_versions).
    monkeypatch.undo()
    other = tmp_path / "other"
    other.mkdir()
    plain = _write_hef(other, _outputs(uint8_data))
    if hp.__version__.startswith("5."):  # 5.0.0+: the scalars for every channel
        cfg = hailort.config_from_hailo(ng, hef_path=plain, nms_json=nms_json, class_activation="sigmoid")
        assert cfg.output(f"{NET}/box_8").scale == float(np.float32(_outputs(uint8_data)[0].scale))
        return
    with pytest.raises(ValueError, match=r"HailoRT 4\.23\.0 refuses such a HEF"):
        hailort.config_from_hailo(ng, hef_path=plain, nms_json=nms_json)


def test_per_feature_float32_dequantized_by_hailort(hp, uint8_data, tmp_path):
    """FLOAT32 outputs: HailoRT dequantizes with the stream's per-channel quant infos
    (async_pipeline_builder.cpp: get_quant_infos of the stream); no HEF needed, no warning."""
    outputs, frames, path = _per_channel_model(hp, uint8_data, tmp_path)
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    im = hp.VDevice().create_infer_model(path)
    for s in im.outputs:
        s.set_format_type(hp.FormatType.FLOAT32)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = hailort.config_from_hailo(im, **SIGMOID)
        cfg_vs = hailort.config_from_hailo(hp.HEF(path), format_type=hp.FormatType.FLOAT32, **SIGMOID)
    assert all(o.dtype == "float32" for o in cfg.outputs) and cfg_vs.outputs == cfg.outputs
    hb = hailort.make_bindings(hd.Decoder(cfg), im.configure(), batch_size=5, input_buffers=_inputs(5))
    _close(hb.run(), direct, atol=1e-4)
    np.testing.assert_array_equal(hb.buffers[f"{NET}/box_8"], _dequantize(frames, outputs)[f"{NET}/box_8"])
    _, ng, in_params, out_params = _vstream_setup(hp, path, hp.FormatType.FLOAT32)
    _fd().lookup(path).rewind()
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        _close(hd.Decoder(cfg_vs)(pipeline.infer(_images(5))), direct, atol=1e-4)


def _sigmoid_on_chip(data):
    """Class tensors as a model compiled with change_output_activation(sigmoid) emits them."""
    quant, frames = {}, {}
    for box, cls, _ in HEAD_KEYS:
        quant[box] = (float(data[f"zp_{box}"]), float(data[f"scale_{box}"]))
        frames[f"{NET}/{box}"] = data[box]
        logits = (data[cls].astype(np.float32) - data[f"zp_{cls}"]) * data[f"scale_{cls}"]
        frames[f"{NET}/{cls}"] = np.rint(255.0 / (1.0 + np.exp(-logits))).astype(np.uint8)
        quant[cls] = (0.0, 1.0 / 255)
    return quant, frames


@pytest.mark.parametrize("activation", ["logits", "sigmoid_on_chip"])
def test_logits_and_sigmoid_on_chip(hp, uint8_data, activation):
    if activation == "logits":
        quant, frames, settings = None, uint8_frames(uint8_data), SIGMOID
    else:
        (quant, frames), settings = _sigmoid_on_chip(uint8_data), dict(score_threshold=0.25)
    outputs = _outputs(uint8_data, quant=quant)
    _, path = _register(outputs, frames)
    _, ng, in_params, out_params = _vstream_setup(hp, path)
    cfg = hailort.config_from_hailo(ng, **settings)
    assert cfg.class_activation == ("sigmoid" if activation == "logits" else "none")
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        dets = hd.Decoder(cfg)(pipeline.infer(_images(5)))
    _same(dets, hd.Decoder(_direct_config(outputs, **settings))(frames))
    assert sum(len(d) for d in dets) == DEMO_TOTAL
    _close(dets, hd.Decoder(demo_config(uint8_data))(uint8_frames(uint8_data)), atol=5e-3)


# -- decode_vstreams ---------------------------------------------------------------------------------

def test_decode_vstreams_frame_by_frame(hp, uint8_data):
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    _, ng, in_params, out_params = _vstream_setup(hp, path)
    decoder = hd.Decoder(hailort.config_from_hailo(ng, **SIGMOID))
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params) as outs:
        ins.get().send(_images(5))
        got = [hailort.decode_vstreams(decoder, outs) for _ in range(5)]
        assert sum(len(d) for d in got) == DEMO_TOTAL
        _same(got, direct)
        ins.get().send(_images(1))  # a dict or list of OutputVStream works too
        _same(hailort.decode_vstreams(decoder, {v.name: v for v in outs}), direct[0])
        with pytest.raises(ValueError, match="missing"):
            hailort.decode_vstreams(decoder, [outs.get(f"{NET}/box_8")])


# -- make_bindings -----------------------------------------------------------------------------------

def test_make_bindings_reuses_arrays(hp, uint8_data):
    """Arrays allocated once: the same objects and data pointers across frames, decoded in place."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    im = hp.VDevice().create_infer_model(path)
    decoder = hd.Decoder(hailort.config_from_hailo(im, **SIGMOID))
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    with im.configure() as cim:
        hb = hailort.make_bindings(decoder, cim, input_buffers=_inputs())
        ids = {n: (id(a), a.ctypes.data) for n, a in hb.buffers.items()}
        assert set(ids) == set(im.output_names)
        assert all(hb.bindings.output(n).get_buffer() is a for n, a in hb.buffers.items())
        got = []
        for i in range(5):
            if i % 2:
                cim.run([hb.bindings], 1000)
                got.append(hb.decode())
            else:
                got.append(hb.run(1000))
            assert {n: (id(a), a.ctypes.data) for n, a in hb.buffers.items()} == ids
            np.testing.assert_array_equal(hb.buffers[f"{NET}/cls_16"], frames[f"{NET}/cls_16"][i])
        _same(got, direct)
        assert sum(len(d) for d in got) == DEMO_TOTAL
        job = cim.run_async([hb.bindings])  # run_async + wait, then decode the same arrays
        job.wait(1000)
        _same(hb.decode(), direct[0])
        with pytest.raises(TypeError):
            cim.run(hb.bindings, 1000)  # pyhailort wants a list of bindings


def test_make_bindings_batch_and_errors(hp, uint8_data):
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    im = hp.VDevice().create_infer_model(path)
    decoder = hd.Decoder(hailort.config_from_hailo(im, **SIGMOID))
    cim = im.configure()
    hb = hailort.make_bindings(decoder, cim, batch_size=5, input_buffers=_inputs(5))
    assert len(hb.bindings) == 5 and hb.buffers[f"{NET}/box_8"].shape == (5, 80, 80, 64)
    assert hb.bindings[3].output(f"{NET}/box_8").get_buffer().base is hb.buffers[f"{NET}/box_8"]
    _same(hb.run(), hd.Decoder(_direct_config(outputs, **SIGMOID))(frames))
    float_cfg = hd.DecoderConfig([hd.OutputInfo(o.name, o.shape, "float32", o.order) for o in outputs])
    with pytest.raises(ValueError, match="set_format_type"):
        hailort.make_bindings(hd.Decoder(float_cfg), cim)
    other = hd.DecoderConfig([hd.OutputInfo("x/box", (80, 80, 64), zp=0.0, scale=1.0),
                              hd.OutputInfo("x/cls", (80, 80, 2), zp=0.0, scale=1.0)])
    with pytest.raises(ValueError, match="not outputs of this model"):
        hailort.make_bindings(hd.Decoder(other), cim)
    with pytest.raises(ValueError, match="pass a Decoder"):
        hailort.make_bindings(None, cim)


# -- the async queue: batched runs ------------------------------------------------------------------

def _single_frame_detections(hp, outputs, frames, path):
    """Each frame inferred and decoded alone (one binding per run), the reference for batches."""
    im = hp.VDevice().create_infer_model(path)
    decoder = hd.Decoder(hailort.config_from_hailo(im, **SIGMOID))
    _fd().lookup(path).rewind()
    with im.configure() as cim:
        hb = hailort.make_bindings(decoder, cim, input_buffers=_inputs())
        got = [hb.run(1000) for _ in range(len(next(iter(frames.values()))))]
    _same(got, hd.Decoder(_direct_config(outputs, **SIGMOID))(frames))
    return decoder, got


@pytest.mark.parametrize("queue", [1, 2, 4])
def test_batched_run_respects_the_async_queue(hp, uint8_data, queue):
    """hb.run() pushes get_async_queue_size() bindings at a time: a batch of 5 gives what the five
    frames give decoded one by one, whatever the queue size."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    fd = _fd()
    path = fd.register(fd.FakeModel(NET, outputs, frames=_frame_list(frames), async_queue_size=queue))
    decoder, single = _single_frame_detections(hp, outputs, frames, path)
    fd.lookup(path).rewind()
    with hp.VDevice().create_infer_model(path).configure() as cim:
        assert cim.get_async_queue_size() == queue
        hb = hailort.make_bindings(decoder, cim, batch_size=5, input_buffers=_inputs(5))
        _same(hb.run(1000), single)
        _same(hb.run(1000), single)  # the frames cycle: the same five again
        # A frame of the caller's still in flight takes a place in the queue: run waits for it.
        one = hailort.make_bindings(decoder, cim, input_buffers=_inputs())
        job = cim.run_async([one.bindings])
        _same(hb.run(1000), [single[(i + 1) % 5] for i in range(5)])
        job.wait(1000)
        _same(one.decode(), single[0])


def test_batch_beyond_the_queue_fails_as_on_a_device(hp, uint8_data):
    """What HailoRT 4.23 does with more bindings than the queue holds (the defect hb.run avoids):
    ConfiguredInferModel.run is run_async + wait, AsyncInferRunnerImpl::run refuses the third frame
    with HAILO_QUEUE_IS_FULL, pyhailort raises HailoRTException from the status exception, and the
    model is shut down; wait_for_async_ready(frames_count > queue size) times out."""
    outputs = _outputs(uint8_data)
    _, path = _register(outputs, uint8_frames(uint8_data))
    im = hp.VDevice().create_infer_model(path)
    decoder = hd.Decoder(hailort.config_from_hailo(im, **SIGMOID))
    cim = im.configure()
    assert cim.get_async_queue_size() == 2
    hb = hailort.make_bindings(decoder, cim, batch_size=5, input_buffers=_inputs(5))
    with pytest.raises(_pyhailort().HailoRTTimeout):  # not exported by hailo_platform itself
        cim.wait_for_async_ready(1000, 3)
    cim.wait_for_async_ready(1000, 2)
    with pytest.raises(hp.HailoRTException, match=r"libhailort failed with error: 82 \(HAILO_QUEUE_IS_FULL\)") as e:
        cim.run(hb.bindings_list, 1000)
    from hailo_platform.pyhailort._pyhailort import HailoRTStatusException
    assert type(e.value) is hp.HailoRTException and isinstance(e.value.__cause__, HailoRTStatusException)
    assert e.value.__cause__.args == ("82",)
    with pytest.raises(_pyhailort().HailoRTStreamAborted):  # shut down: no further inference
        cim.run(hb.bindings_list[:1], 1000)


def test_run_refuses_a_queue_size_below_one(hp, uint8_data):
    outputs = _outputs(uint8_data)
    _, path = _register(outputs, uint8_frames(uint8_data))
    im = hp.VDevice().create_infer_model(path)
    cim = im.configure()
    hb = hailort.make_bindings(hd.Decoder(hailort.config_from_hailo(im, **SIGMOID)), cim, input_buffers=_inputs())
    cim.get_async_queue_size = lambda: 0
    with pytest.raises(ValueError, match="get_async_queue_size\\(\\) returned 0; expected >= 1"):
        hb.run(1000)


def test_async_outputs_are_written_when_the_job_completes(hp, uint8_data):
    """The caller's arrays hold a frame only once its job completed (the double, like HailoRT,
    copies into them in the completion callback): decode after job.wait()."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    im = hp.VDevice().create_infer_model(path)
    with im.configure() as cim:
        hb = hailort.make_bindings(hd.Decoder(hailort.config_from_hailo(im, **SIGMOID)), cim, input_buffers=_inputs())
        done = []
        job = cim.run_async([hb.bindings], lambda completion_info: done.append(completion_info.exception))
        name = f"{NET}/cls_16"
        assert not hb.buffers[name].any() and not done
        job.wait(1000)
        assert done == [None]
        np.testing.assert_array_equal(hb.buffers[name], frames[name][0])


def test_docs_run_async_pattern(hp, uint8_data):
    """The run_async loop of docs/hailort.md, "Pipelined with `run_async`" (a ring of
    get_async_queue_size() bindings, wait_for_async_ready before each push, the oldest job waited
    for before its bindings are reused) gives every frame's detections, identical to decoding each
    frame alone."""
    from collections import deque

    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    fd = _fd()
    path = fd.register(fd.FakeModel(NET, outputs, frames=_frame_list(frames), async_queue_size=3))
    decoder, single = _single_frame_detections(hp, outputs, frames, path)
    fd.lookup(path).rewind()
    camera = list(_images(12))
    results = []
    infer_model = hp.VDevice().create_infer_model(path)
    # -- as in docs/hailort.md ----------------------------------------------------------------
    with infer_model.configure() as configured:
        depth = configured.get_async_queue_size()
        ring = [decoder.make_bindings(configured, infer_model=infer_model) for _ in range(depth)]
        pending = deque()                                    # (job, bindings) in push order
        for i, frame in enumerate(camera):
            if len(pending) == depth:                        # the oldest frame's bindings come back
                job, done = pending.popleft()
                job.wait(10000)
                results.append(done.decode())
            bound = ring[i % depth]
            bound.bindings.input().set_buffer(frame)
            configured.wait_for_async_ready(timeout_ms=10000)
            pending.append((configured.run_async([bound.bindings]), bound))
        while pending:
            job, done = pending.popleft()
            job.wait(10000)
            results.append(done.decode())
    # ----------------------------------------------------------------------------------------
    _same(results, [single[i % 5] for i in range(12)])


# -- NCHW user order -------------------------------------------------------------------------------

def test_nchw_outputs(hp, uint8_data):
    """set_format_order(NCHW) / VStreamParams order NCHW on the NHCW class layers: HailoRT hands out
    an (H, W, C)-shaped array filled channel first (bindings_common.hpp get_pybind_shape,
    transform.cpp NHCW -> NCHW); the adapters describe and decode it. FCR box layers cannot be
    reordered to NCHW (reorder_output_stream: unsupported)."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    cls = [o.name for o in outputs if "/cls_" in o.name]
    im = hp.VDevice().create_infer_model(path)
    for name in cls:
        im.output(name).set_format_order(hp.FormatOrder.NCHW)
    cfg = hailort.config_from_hailo(im, **SIGMOID)
    assert [o.order for o in cfg.outputs] == ["FCR", "NCHW"] * 3
    with im.configure() as cim:
        hb = hailort.make_bindings(hd.Decoder(cfg), cim, batch_size=5, input_buffers=_inputs(5))
        assert hb.buffers[cls[0]].shape == (5, 80, 80, 2)  # pyhailort's (H, W, C) shape, channel-first data
        _same(hb.run(1000), direct)
        np.testing.assert_array_equal(hb.buffers[cls[0]].reshape(5, 2, 80, 80), frames[cls[0]].transpose(0, 3, 1, 2))
    box = im.output(f"{NET}/box_8")
    box.set_format_order(hp.FormatOrder.NCHW)
    with pytest.raises(_pyhailort().HailoRTInvalidOperationException, match="FCR to hailo_format_order_t NCHW"):
        im.configure()
    # vstreams: the user's order in the params
    _rewind(path)
    _, ng, in_params, out_params = _vstream_setup(hp, path)
    for name in cls:
        out_params[name].user_buffer_format.order = hp.FormatOrder.NCHW
    cfg_ng = hailort.config_from_hailo(ng, output_params=out_params, **SIGMOID)
    assert cfg_ng.outputs == cfg.outputs
    decoder = hd.Decoder(cfg_ng)
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params) as outs:
        ins.get().send(_images(5))
        _same([hailort.decode_vstreams(decoder, outs) for _ in range(5)], direct)
    _rewind(path)
    with hp.InferVStreams(ng, in_params, out_params) as pipeline:
        results = pipeline.infer(_images(5))
    # InferVStreams hands NCHW out as [N, H, W, C]-shaped arrays: view them as [N, C, H, W].
    arrays = {n: (a.reshape(a.shape[0], a.shape[3], a.shape[1], a.shape[2]) if n in cls else a)
              for n, a in results.items()}
    _same(decoder(arrays), direct)


# -- HailoRT's own NMS ---------------------------------------------------------------------------------

def _nms_model(hp, data, **settings):
    """A HEF with HailoRT's YOLOv8 NMS op: the device hands out HAILO_NMS_BY_CLASS buffers (made
    here by hailo-decode with HailoRT's semantics from the real frames)."""
    fd = _fd()
    raw = uint8_frames(data)
    ref = hd.Decoder(demo_config(data, **settings))
    nms_frames = [{NMS_NAME: ref.decode_to_hailo_nms(f)} for f in _frame_list(raw)]
    expected = ref(raw)
    model = fd.FakeModel(NET, _outputs(data), frames=nms_frames, nms=fd.FakeNms(NMS_NAME, 2, 100))
    return fd.register(model), expected


def _rewind(path):
    _fd().lookup(path).rewind()


def _same_nms(got, expected):
    """Same detections per class (the NMS form does not keep the order across classes)."""
    if isinstance(got, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same_nms(g, e)
        return
    assert isinstance(got, hd.Detections)
    np.testing.assert_array_equal(got.to_hailo_nms_buffer(num_classes=2, max_per_class=100),
                                  e_buf := expected.to_hailo_nms_buffer(num_classes=2, max_per_class=100))
    assert e_buf.size == 1002


def test_nms_hef_surface(hp, uint8_data, no_hef_reader):
    path, _ = _nms_model(hp, uint8_data)
    hef = hp.HEF(path)
    (info,) = hef.get_output_vstream_infos()  # raw layers hidden from the vstreams...
    assert info.name == NMS_NAME and info.format.order == hp.FormatOrder.HAILO_NMS_BY_CLASS
    assert info.format.type == hp.FormatType.FLOAT32 and info.shape == (2, 5, 100)
    assert (info.nms_shape.number_of_classes, info.nms_shape.max_bboxes_per_class) == (2, 100)
    assert len(hef.get_output_stream_infos()) == 6  # ...but not from the streams
    im = hp.VDevice().create_infer_model(path)
    s = im.output()
    assert s.is_nms and s.shape == [2 * (1 + 5 * 100)] and s.format.type == hp.FormatType.FLOAT32
    with pytest.raises(ValueError, match="decode_hailo_nms"):
        hailort.config_from_hailo(hef)
    with pytest.raises(ValueError, match="decode_hailo_nms"):
        hailort.config_from_hailo(im)
    _, ng, in_params, out_params = _vstream_setup(hp, path, hp.FormatType.UINT8)
    with pytest.raises(hp.HailoRTException, match="FLOAT32"):
        with hp.InferVStreams(ng, in_params, out_params):
            pass
    s.set_format_type(hp.FormatType.UINT8)
    with pytest.raises(hp.HailoRTException, match="FLOAT32"):
        im.configure()


@pytest.mark.parametrize("tf_nms_format", [False, True])
def test_nms_hef_infer_vstreams(hp, uint8_data, tf_nms_format):
    path, expected = _nms_model(hp, uint8_data)
    _, ng, in_params, out_params = _vstream_setup(hp, path, hp.FormatType.FLOAT32)
    with hp.InferVStreams(ng, in_params, out_params, tf_nms_format=tf_nms_format) as pipeline:
        out = pipeline.infer(_images(5))[NMS_NAME]
    if tf_nms_format:
        assert out.shape == (5, 2, 5, 100) and out.dtype == np.float32
    else:
        assert len(out) == 5 and all(len(f) == 2 for f in out)
        assert all(a.ndim == 2 and a.shape[1] == 5 for f in out for a in f)
    got = hd.decode_hailo_nms(out, num_classes=2)
    assert all(isinstance(d, hd.Detections) for d in got)
    _same_nms(got, expected)
    assert sum(len(d) for d in got) == DEMO_TOTAL


def test_nms_hef_decode_vstreams_and_bindings(hp, uint8_data):
    path, expected = _nms_model(hp, uint8_data)
    _, ng, in_params, out_params = _vstream_setup(hp, path)  # AUTO: FLOAT32 for the NMS output
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params) as outs:
        ins.get().send(_images(5))
        got = [hailort.decode_vstreams(None, outs) for _ in range(5)]
    _same_nms(got, expected)
    # With a decoder, its box format and input size apply.
    px = hd.Decoder(demo_config(uint8_data, box_format="xyxy_pixels"))
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params, tf_nms_format=True) as outs:
        ins.get().send(_images(1))
        d = hailort.decode_vstreams(px, outs)
    assert d.box_format == "xyxy_pixels" and d.image_size == (640, 640)
    np.testing.assert_allclose(d.boxes_as("yxyx_normalized"), got[0].boxes, atol=1e-6)
    im = hp.VDevice().create_infer_model(path)
    with im.configure() as cim:
        hb = hailort.make_bindings(None, cim, input_buffers=_inputs())
        assert hb.buffers[NMS_NAME].shape == (1002,)
        _rewind(path)
        single = [hb.run(1000) for _ in range(5)]
        hb5 = hailort.make_bindings(None, cim, batch_size=5, input_buffers=_inputs(5))
        batch = hb5.run(1000)
    _same_nms(single, expected)
    _same_nms(batch, expected)


# -- raw device buffers ----------------------------------------------------------------------------------

def _to_device(host, order, padded):
    """A host (H, W, C) frame as a raw device buffer in `order` with padding (flat, 8-byte frames)."""
    h, w, c = host.shape
    hp_, wp, cp = padded
    dense = np.zeros((hp_, wp, cp), host.dtype)
    dense[:h, :w, :c] = host
    if order == "NHCW":
        dense = dense.transpose(0, 2, 1)
    flat = dense.reshape(-1)
    pad = -flat.nbytes % 8 // host.itemsize
    return np.concatenate([flat, np.zeros(pad, host.dtype)])


class _RawStreamsModel:
    """Stands in for a ConfiguredInferModel whose outputs are raw device buffers (HailoRT 5.x
    HAILO_DISABLE_PP, or a C++ raw-stream pipeline): create_bindings / run as pyhailort's."""

    def __init__(self, device_frames):
        self.device_frames = device_frames
        self.i = 0

    class _Stream:
        def __init__(self, buf):
            self.buf = buf

        def set_buffer(self, buf):
            self.buf = buf

        def get_buffer(self, tf_format=False):
            return self.buf

    class _Bindings:
        def __init__(self, outs):
            self.outs = {n: _RawStreamsModel._Stream(b) for n, b in outs.items()}

        def output(self, name=""):
            return self.outs[name]

    def create_bindings(self, input_buffers=None, output_buffers=None):
        return self._Bindings(output_buffers or {})

    def run(self, bindings, timeout):
        for b in bindings:
            for n, s in b.outs.items():
                src = self.device_frames[n][self.i % len(self.device_frames[n])]
                assert s.buf.nbytes == src.nbytes
                s.buf[...] = src
            self.i += 1


def test_device_buffers(hp, uint8_data):
    """config_from_hailo(device=True) reads device order and padded shape from the stream infos;
    make_bindings binds raw frames of that size and decodes them in place."""
    fd = _fd()
    outputs = _outputs(uint8_data)
    for o in outputs:
        if o.name.endswith("_32"):
            o.padded_shape = (20, 24, o.shape[2])  # width padded to 8 bytes, as HailoRT does for NHCW
    frames = uint8_frames(uint8_data)
    path = fd.register(fd.FakeModel(NET, outputs, frames=_frame_list(frames)))
    cfg = hailort.config_from_hailo(hp.HEF(path), device=True, **SIGMOID)
    box32, cls32 = cfg.output(f"{NET}/box_32"), cfg.output(f"{NET}/cls_32")
    assert box32.device and box32.order == "FCR" and box32.padded_shape == (20, 24, 64)
    assert cls32.order == "NHCW" and cls32.padded_shape == (20, 24, 2)
    device_frames = {o.name: [_to_device(f, o.order, o.padded_shape) for f in frames[o.name]] for o in cfg.outputs}
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    _same(hd.Decoder(cfg)({n: np.stack(v) for n, v in device_frames.items()}), direct)
    stub = _RawStreamsModel(device_frames)
    hb = hailort.make_bindings(hd.Decoder(cfg), stub)
    assert hb.buffers[f"{NET}/cls_32"].shape == (cls32.frame_elements,)
    ptr = hb.buffers[f"{NET}/cls_32"].ctypes.data
    got = [hb.run() for _ in range(5)]
    assert hb.buffers[f"{NET}/cls_32"].ctypes.data == ptr
    _same(got, direct)


# -- the hailo_decode.hef hook ------------------------------------------------------------------------

def test_hef_reader_hook(hp, uint8_data, monkeypatch):
    calls = []
    sentinel = object()

    def config_from_hef(path, network_group=None, *, device_buffers=False, **settings):
        calls.append((path, network_group, device_buffers, settings))
        return sentinel

    monkeypatch.setattr(hailort, "_hef_module", lambda: types.SimpleNamespace(config_from_hef=config_from_hef))
    outputs = _outputs(uint8_data)
    _, path = _register(outputs, uint8_frames(uint8_data))
    assert hailort.config_from_hailo(hp.HEF(path), hef_path="/models/x.hef", score_threshold=0.3) is sentinel
    version = ".".join(hp.__version__.split(".")[:2])  # the installed HailoRT's, as the config's hailort_version
    assert calls[-1] == ("/models/x.hef", None, False, {"score_threshold": 0.3, "hailort_version": version})
    # Without hef_path the object is read; the HEF's own path is used only when it cannot tell.
    assert isinstance(hailort.config_from_hailo(hp.HEF(path)), hd.DecoderConfig)
    nms_path, _ = _nms_model(hp, uint8_data)
    assert hailort.config_from_hailo(hp.HEF(nms_path), device=True) is sentinel
    assert calls[-1] == (nms_path, None, True, {"hailort_version": version})
    assert hailort.config_from_hailo(hp.VDevice().create_infer_model(nms_path)) is sentinel
    assert calls[-1][0] == nms_path


def test_hef_module_lookup(monkeypatch):
    """The hook finds hailo_decode.hef with importlib and is None (no failure) without it."""
    import importlib.util
    present = hailort._hef_module()
    assert present is None or callable(present.config_from_hef)
    monkeypatch.delitem(sys.modules, "hailo_decode.hef", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    assert hailort._hef_module() is None


# -- without HailoRT -----------------------------------------------------------------------------------

def test_adapters_need_hailort(monkeypatch, uint8_data):
    _drop_hailo_platform(monkeypatch)
    monkeypatch.setitem(sys.modules, "hailo_platform", None)  # import hailo_platform fails
    decoder = hd.Decoder(demo_config(uint8_data))
    for call in (lambda: hailort.config_from_hailo(object()), lambda: hailort.decode_vstreams(decoder, []),
                 lambda: hailort.make_bindings(decoder, object())):
        with pytest.raises(ImportError, match="HailoRT") as e:
            call()
        assert "hailo_platform" in str(e.value)


def test_import_without_hailort(tmp_path):
    """`import hailo_decode` (and hailo_decode.hailort) neither needs nor imports hailo_platform."""
    code = ("import sys; sys.modules['hailo_platform'] = None\n"
            "import hailo_decode, hailo_decode.hailort\n"
            "print(hailo_decode.Decoder.__name__)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Decoder" in r.stdout, r.stderr
    code = (f"import sys; sys.path.insert(0, {str(FAKE_ROOT)!r})\n"
            "import hailo_decode, hailo_decode.hailort\n"
            "assert 'hailo_platform' not in sys.modules\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


# -- the public methods that front these adapters ---------------------------------------------------

def test_public_methods_front_the_adapters(hp, uint8_data):
    """DecoderConfig.from_hailo, Decoder.decode_vstreams and Decoder.make_bindings give what the
    adapter functions give."""
    outputs = _outputs(uint8_data)
    frames = uint8_frames(uint8_data)
    _, path = _register(outputs, frames)
    _, ng, in_params, out_params = _vstream_setup(hp, path)
    decoder = hd.Decoder(hd.DecoderConfig.from_hailo(ng, **SIGMOID))
    direct = hd.Decoder(_direct_config(outputs, **SIGMOID))(frames)
    with hp.InputVStreams(ng, in_params) as ins, hp.OutputVStreams(ng, out_params) as outs:
        ins.get().send(_images(1))
        _same(decoder.decode_vstreams(outs), direct[0])
    _, path = _register(outputs, frames)
    im = hp.VDevice().create_infer_model(path)
    decoder = hd.Decoder(hd.DecoderConfig.from_hailo(im, **SIGMOID))
    with im.configure() as cim:
        hb = decoder.make_bindings(cim, input_buffers=_inputs())
        _same(hb.run(1000), direct[0])
