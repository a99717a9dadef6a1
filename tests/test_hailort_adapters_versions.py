"""The HailoRT adapters under HailoRT 4.23's and 5.2's pyhailort (issue 36), each test run against
both test doubles (tests/fake_hailo_platform = 4.23, tests/fake_hailo_platform_52 = 5.2) where the
behaviour exists in both: the version is read from hailo_platform.__version__, HAILO_DISABLE_PP is
honoured only where HailoRT reads it (5.x) and then handled end to end (device orders, padded
shapes, renamed outputs, device-layout frames NHCW / FCR padded / F8CR read by the core against the
5.2 double's NumPy layouts), per-feature quantization with empty lists per version, BY_SCORE's
dtype rule, make_bindings refusing to fall back to HailoRT's NMS output with a Decoder, and the
Hailo-10H (configure refused, InferModel path working)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import hailort
from hailo_decode.hef import read_hef

import hef_writer as w
from conftest import assert_equivalent_detections

NET = "yolov8n"
NMS = f"{NET}/yolov8_nms_postprocess"
CLASSES = 4
SIZE = 320
SIGMOID = dict(class_activation="none")


def _version(hp):
    return "5.2" if hp.__version__.startswith("5.") else "4.23"


def _hef(tmp_path, *, renamed=True, per_feature=True, nms=True, empty_lists=False):
    """A HEF (tests/hef_writer.py) with an NMS op over FCR, NHCW and F8CR outputs, padded, uint8 and
    uint16, per-feature quantized; renamed=True: the output layers are named "<name>_0" and the
    sorted output names are "<name>", as HailoRT 5.x then renames them under HAILO_DISABLE_PP."""
    layers = w.yolov8_layers(CLASSES, NET, input_size=SIZE)
    base = [layer.name for layer in layers if layer.output]
    if empty_lists:
        for layer in layers:
            layer.zps, layer.scales = (), ()
    if renamed:
        for layer in layers:
            if layer.output:
                layer.name += "_0"
    op = w.yolov8_nms(CLASSES, image_hw=(float(SIZE), float(SIZE))) if nms else None
    ng = w.network_group(NET, layers, nms=op, sorted_outputs=base)
    exts = [0, 3, 12, 13, 27] + ([25] if per_feature else [])
    path = tmp_path / f"{NET}.hef"
    path.write_bytes(w.wrap(w.hef_proto([ng], extensions=exts), 1))
    return str(path)


def _model(hp, path, *, frames=3, hailo10h=False, nms=True, seed=0):
    """The double's model for the HEF at `path`: one FakeOutput per output layer (the live name the
    rename gives, the file's layer name kept), random frames of the logical shape, and the NMS
    op's output (no detections: its frames are not what these tests read)."""
    from hailo_platform import _fake_device as fd
    info = read_hef(path)
    ng = info.network_group()
    # OUTPUT_SCALE_PER_FEATURE (extension 25): every output's quant_info is zeroed (hef.cpp,
    # HefUtils::fill_layer_info), whether its lists are filled or empty.
    per = 25 in info.extensions
    rng = np.random.default_rng(seed)
    outs, raw = [], []
    for layer in ng.outputs:
        live = layer.name[:-2] if layer.name.endswith("_0") else layer.name
        outs.append(fd.FakeOutput(live, layer.shape, layer.dtype, layer.host_order, zp=layer.zp, scale=layer.scale,
                                  padded_shape=layer.hw_shape, device_order=layer.device_order, layer_name=layer.name,
                                  per_feature=per or None))
        raw.append((live, layer))
    nms_out = fd.FakeNms(NMS, CLASSES, 100) if nms else None
    frame_list = []
    for _ in range(frames):
        f = {}
        for live, layer in raw:
            hi = 255 if layer.dtype == "uint8" else 65535
            f[live] = rng.integers(0, hi + 1, layer.shape, dtype=np.dtype(layer.dtype))
        if nms_out is not None:
            f[NMS] = np.zeros(nms_out.flat_size, np.float32)
        frame_list.append(f)
    model = fd.FakeModel(NET, outs, frames=frame_list, nms=nms_out, input_shape=(SIZE, SIZE, 3), hailo10h=hailo10h)
    fd.register(model, path)
    return model, frame_list, ng


def _host_reference(path, frames, ng, **settings):
    """What the raw heads decode to read as dense host frames (no device layout involved), with the
    installed HailoRT's ops as config_from_hailo picks them (its ties differ between 4.23 and 5.x)."""
    v = hailort._pyhailort_version()
    settings.setdefault("hailort_version", f"{v[0]}.{v[1]}")
    cfg = hd.DecoderConfig.from_hef(path, **settings)
    dec = hd.Decoder(cfg)
    by_file = {layer.name: layer for layer in ng.outputs}
    out = []
    for f in frames:
        out.append(dec({o.name: f[o.name[:-2] if o.name.endswith("_0") else o.name] for o in cfg.outputs
                        if o.name in by_file}))
    return out


def _inputs(n=None):
    shape = (SIZE, SIZE, 3) if n is None else (n, SIZE, SIZE, 3)
    return {f"{NET}/input_layer1": np.zeros(shape, np.uint8)}


# -- the version ----------------------------------------------------------------------------------------

def test_the_installed_version_is_read(hp_any):
    assert hailort._pyhailort_version() == {"4.23": (4, 23, 0), "5.2": (5, 2, 0)}[_version(hp_any)]


def test_from_hailo_follows_the_installed_version(hp_any, tmp_path):
    """from_hailo gives the config the installed HailoRT's version (the ops the hailort preset then
    matches, the byte-mask records decode_to_hailo_nms writes); an explicit one stands."""
    path = _hef(tmp_path, renamed=False, nms=False, per_feature=False)  # (4.23 refuses this writer's per-feature HEF)
    _model(hp_any, path, nms=False)
    im = hp_any.VDevice().create_infer_model(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hailort.HefQuantizationWarning)
        cfg = hailort.config_from_hailo(im, **SIGMOID)
        assert str(cfg.hailort_version).startswith(_version(hp_any))
        assert str(hailort.config_from_hailo(im, hailort_version="4.23", **SIGMOID).hailort_version).startswith("4.23")


def test_an_unreadable_version_is_an_error(hp, monkeypatch):
    monkeypatch.setattr(hp, "__version__", "unknown")
    with pytest.raises(ValueError, match="cannot be told"):
        hailort.config_from_hailo(object())


@pytest.mark.parametrize("value,on", [("1", True), ("1abc", True), ("10", True), ("0", False), ("true", False),
                                      ("", False), (" 1", False)])
def test_hailo_disable_pp_is_read_as_hailort_reads_it(hp_any, monkeypatch, value, on):
    """../common/utils.hpp at v5.2.0, is_env_variable_on: strncmp(value, "1", 1) == 0; 4.x never reads it."""
    monkeypatch.setenv("HAILO_DISABLE_PP", value)
    assert hailort._pp_disabled(hailort._pyhailort_version()) is (on and _version(hp_any) == "5.2")
    monkeypatch.delenv("HAILO_DISABLE_PP")
    assert not hailort._pp_disabled(hailort._pyhailort_version())


# -- HAILO_DISABLE_PP, end to end -------------------------------------------------------------------------

def test_disable_pp_infer_model_end_to_end(hp_any, tmp_path, monkeypatch):
    """5.2: the InferModel reports device orders, padded shapes and renamed outputs; from_hailo
    takes the logical shapes and the quantization from the HEF, make_bindings binds raw device
    buffers and the core reads NHCW, FCR (padded) and F8CR frames to the same detections as the
    dense frames. 4.23 does not read HAILO_DISABLE_PP: the model's only output is the NMS op's,
    and make_bindings with a Decoder says so instead of quietly decoding HailoRT's NMS output."""
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path)
    _, frames, ng = _model(hp_any, path)
    im = hp_any.VDevice().create_infer_model(path)
    if _version(hp_any) == "4.23":
        assert im.output_names == [NMS]
        cfg = hailort.config_from_hailo(im, **SIGMOID)  # the raw layers from the HEF file
        assert not any(o.device for o in cfg.outputs)
        with pytest.raises(ValueError, match="HailoRT's own NMS op") as e:
            hailort.make_bindings(hd.Decoder(cfg), im.configure(), input_buffers=_inputs())
        assert "decoder=None" in str(e.value) and "HAILO_DISABLE_PP" not in str(e.value)
        return
    live = {n: im.output(n) for n in im.output_names}
    assert sorted(live) == sorted(layer.name[:-2] for layer in ng.outputs)  # renamed, no NMS output
    for layer in ng.outputs:
        s = live[layer.name[:-2]]
        assert tuple(s.shape) == tuple(layer.hw_shape) and s.format.order.name == layer.device_order
    assert {layer.device_order for layer in ng.outputs} >= {"FCR", "NHCW", "F8CR"}
    assert any(tuple(layer.hw_shape) != tuple(layer.shape) for layer in ng.outputs)  # padding shows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = hailort.config_from_hailo(im, **SIGMOID)
    # device=True says what is so anyway: accepted for an InferModel here (refused without the variable)
    assert hailort.config_from_hailo(im, device=True, **SIGMOID).outputs == cfg.outputs
    for layer in ng.outputs:
        o = cfg.output(layer.name[:-2])
        assert o.device and o.shape == tuple(layer.shape) and o.padded_shape == tuple(layer.hw_shape)
        assert o.order == layer.device_order
    want = _host_reference(path, frames, ng, **SIGMOID)
    assert sum(len(d) for d in want) > 0
    hb = hailort.make_bindings(hd.Decoder(cfg), im.configure(), batch_size=3, input_buffers=_inputs(3))
    got = hb.run(1000)
    for g, r in zip(got, want):
        assert_equivalent_detections(g, r)


def test_disable_pp_hef_device_true_takes_the_logical_shape(hp_any, tmp_path, monkeypatch):
    """from_hailo(hef, device=True) under HAILO_DISABLE_PP: the HEF object's vstream infos report
    the hw shape (hef.cpp at v5.2.0: layer_info.shape = hw_shape); the config's shapes are the
    file's logical ones, the padded ones the hw shapes. 4.23 reads the stream infos as before."""
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path, renamed=False)
    _, _, ng = _model(hp_any, path)
    hef = hp_any.HEF(path)
    cfg = hailort.config_from_hailo(hef, device=True, **SIGMOID)
    for layer in ng.outputs:
        o = cfg.output(layer.name)
        assert o.device and o.shape == tuple(layer.shape) and o.padded_shape == tuple(layer.hw_shape)
    if _version(hp_any) == "5.2":
        infos = {i.name: i for i in hef.get_output_vstream_infos()}
        assert all(tuple(infos[layer.name].shape) == tuple(layer.hw_shape) for layer in ng.outputs)


def test_disable_pp_with_nms_json(hp52, tmp_path, monkeypatch):
    """The DFC NMS JSON names the file's layers ("conv41"); the outputs carry the renamed live
    names, so the JSON's layer names are matched on the name's end as everywhere else."""
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path)
    _, frames, ng = _model(hp52, path)
    nms_json = {"nms_scores_th": 0.2, "nms_iou_th": 0.7, "image_dims": [SIZE, SIZE], "max_proposals_per_class": 100,
                "classes": CLASSES, "regression_length": 16,
                "bbox_decoders": [{"stride": 8, "reg_layer": "conv41", "cls_layer": "conv42"},
                                  {"stride": 16, "reg_layer": "conv52", "cls_layer": "conv53"},
                                  {"stride": 32, "reg_layer": "conv62", "cls_layer": "conv63"}]}
    im = hp52.VDevice().create_infer_model(path)
    cfg = hailort.config_from_hailo(im, nms_json, **SIGMOID)
    assert {o.name for o in cfg.outputs} == set(im.output_names) and all(o.device for o in cfg.outputs)
    hb = hailort.make_bindings(hd.Decoder(cfg), im.configure(), batch_size=3, input_buffers=_inputs(3))
    for g, r in zip(hb.run(1000), _host_reference(path, frames, ng, **SIGMOID)):
        assert_equivalent_detections(g, r)


def test_disable_pp_needs_the_hef_file(hp52, tmp_path, monkeypatch):
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path)
    _model(hp52, path)
    ng = hp52.VDevice().configure(hp52.HEF(path))[0]  # a network group does not know its file
    with pytest.raises(ValueError, match="pass hef_path=") as e:
        hailort.config_from_hailo(ng, **SIGMOID)
    assert "HAILO_DISABLE_PP='1'" in str(e.value) and "padded device shapes" in str(e.value)
    cfg = hailort.config_from_hailo(ng, hef_path=path, **SIGMOID)
    assert all(o.device for o in cfg.outputs)
    monkeypatch.setattr(hailort, "_hef_module", lambda: None)
    with pytest.raises(ValueError, match="hailo_decode.hef is not installed"):
        hailort.config_from_hailo(hp52.VDevice().create_infer_model(path))


def test_disable_pp_ignores_set_format_type(hp52, tmp_path, monkeypatch):
    """async_pipeline_builder.cpp at v5.2.0: the stream's format, whatever the user set. A model told
    FLOAT32 still delivers device integers: refused, not read as floats."""
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path)
    _model(hp52, path)
    im = hp52.VDevice().create_infer_model(path)
    cfg = hailort.config_from_hailo(im, **SIGMOID)
    name = im.output_names[0]
    im.output(name).set_format_type(hp52.FormatType.FLOAT32)
    with pytest.raises(ValueError, match="ignores set_format_type"):
        hailort.config_from_hailo(im, **SIGMOID)
    cim = im.configure()
    with pytest.raises(ValueError, match="ignores set_format_type"):
        hailort.make_bindings(hd.Decoder(cfg), cim, infer_model=im)


def test_disable_pp_wrong_hef_is_refused(hp52, tmp_path, monkeypatch):
    """The HEF given must be the model's: a layer whose order or hw shape differs is named."""
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path)
    _model(hp52, path)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = _hef(other_dir, renamed=True)
    layers = w.yolov8_layers(CLASSES, NET, input_size=2 * SIZE)  # other grids
    for layer in layers:
        if layer.output:
            layer.name += "_0"
    (other_dir / f"{NET}.hef").write_bytes(w.wrap(w.hef_proto([w.network_group(NET, layers)]), 1))
    with pytest.raises(ValueError, match="not the HEF of this model"):
        hailort.config_from_hailo(hp52.VDevice().create_infer_model(path), hef_path=other, **SIGMOID)


# -- Hailo-10H ----------------------------------------------------------------------------------------------

def test_hailo10h_configure_refused_infer_model_works(hp52, tmp_path):
    """A Hailo-10H: VDevice.configure is HAILO_NOT_IMPLEMENTED (so no vstreams and no
    decode_vstreams); the InferModel path decodes, HailoBindings.run pushing a batch larger than
    the async queue a queue at a time."""
    path = _hef(tmp_path, renamed=False, nms=False)
    model, frames, ng = _model(hp52, path, frames=5, hailo10h=True, nms=False)
    with pytest.raises(hp52.HailoRTException, match="HAILO_NOT_IMPLEMENTED"):
        hp52.VDevice().configure(hp52.HEF(path))
    im = hp52.VDevice().create_infer_model(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hailort.HefQuantizationWarning)
        cfg = hailort.config_from_hailo(im, **SIGMOID)
    hb = hailort.make_bindings(hd.Decoder(cfg), im.configure(), batch_size=5, input_buffers=_inputs(5))
    assert model.async_queue_size < 5
    got = hb.run(1000)
    want = _host_reference(path, frames, ng, **SIGMOID)
    for g, r in zip(got, want):
        assert_equivalent_detections(g, r)


def test_hailo10h_queue_is_the_servers(hp52, tmp_path):
    """configured_infer_model_hrpc_client.cpp at v5.2.0: more frames than the queue in one run() are
    refused (HAILO_QUEUE_IS_FULL, from the server) and the client's model is shut down, as on a
    local device; wait_for_async_ready beyond the queue times out; hb.run() never does either."""
    path = _hef(tmp_path, renamed=False, nms=False)
    _model(hp52, path, frames=5, hailo10h=True, nms=False)
    im = hp52.VDevice().create_infer_model(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hailort.HefQuantizationWarning)
        decoder = hd.Decoder(hailort.config_from_hailo(im, **SIGMOID))
    cim = im.configure()
    hb = hailort.make_bindings(decoder, cim, batch_size=5, input_buffers=_inputs(5))
    hb.run(1000)
    assert cim._configured_infer_model.hrpc_requests == 5
    from hailo_platform.pyhailort import _pyhailort, pyhailort
    with pytest.raises(pyhailort.HailoRTTimeout):
        cim.wait_for_async_ready(1000, 3)
    with pytest.raises(hp52.HailoRTException, match="HAILO_QUEUE_IS_FULL"):
        cim.run(hb.bindings_list, 1000)
    with pytest.raises(pyhailort.HailoRTStreamAborted):
        cim.run(hb.bindings_list[:1], 1000)
    assert _pyhailort.HAILO_QUEUE_IS_FULL == 82


# -- per-feature quantization with empty lists -------------------------------------------------------------

def test_per_feature_empty_lists(hp_any, tmp_path):
    """hef.cpp (HefUtils::fill_layer_info): from 5.0.0 an empty qp_zps / qp_scales list means the
    scalar for every channel (quant_info still zeroed); 4.23 requires one value per channel and
    refuses the HEF. The adapter does what the installed version does."""
    path = _hef(tmp_path, renamed=False, nms=False, empty_lists=True)
    _, frames, ng = _model(hp_any, path, nms=False)
    im = hp_any.VDevice().create_infer_model(path)
    assert all(not any((q.qp_zp, q.qp_scale)) for n in im.output_names for q in im.output(n).quant_infos)
    if _version(hp_any) == "4.23":
        with pytest.raises(ValueError, match=r"HailoRT 4\.23\.0 refuses such a HEF"):
            hailort.config_from_hailo(im, **SIGMOID)
        return
    with pytest.warns(hailort.HefQuantizationWarning):
        cfg = hailort.config_from_hailo(im, **SIGMOID)
    for layer in ng.outputs:
        o = cfg.output(layer.name)
        assert o.zp == float(np.float32(layer.qp_zp)) and o.scale == float(np.float32(layer.qp_scale))
    got = hd.Decoder(cfg)({k: np.stack([f[k] for f in frames]) for k in frames[0]})
    want = _host_reference(path, frames, ng, **SIGMOID)
    for g, r in zip(got, want):
        assert_equivalent_detections(g, r)


# -- make_bindings and HailoRT's NMS output ------------------------------------------------------------------

def test_make_bindings_refuses_to_fall_back_to_hailorts_nms(hp_any, tmp_path):
    """A Decoder whose outputs the model does not have, the model's only output HailoRT's NMS: a
    ValueError (the decoder's thresholds would never apply), naming decoder=None and, on 5.x,
    HAILO_DISABLE_PP. decoder=None takes HailoRT's detections."""
    path = _hef(tmp_path, renamed=False)
    _model(hp_any, path)
    im = hp_any.VDevice().create_infer_model(path)
    cfg = hd.DecoderConfig.from_hef(path, **SIGMOID)
    with pytest.raises(ValueError, match="HailoRT's own NMS op") as e:
        hailort.make_bindings(hd.Decoder(cfg), im.configure(), input_buffers=_inputs())
    assert ("HAILO_DISABLE_PP=1" in str(e.value)) is (_version(hp_any) == "5.2")
    hb = hailort.make_bindings(None, im.configure(), input_buffers=_inputs())
    assert len(hb.run(1000)) == 0


def test_by_score_dtype_per_version(hp_any, tmp_path):
    """HAILO_NMS_BY_SCORE through the InferModel: 5.2 takes only UINT8 (nms_post_process.cpp,
    NmsOpMetadata::validate_format_type) and gives its bytes as the shape (bindings_common.hpp);
    4.23's Python API has no shape for it (get_pybind_shape raises): a clear error."""
    path = _hef(tmp_path, renamed=False)
    model, _, _ = _model(hp_any, path)
    dets = np.zeros(model.nms.flat_size, np.float32)
    dets[0] = 1  # class 0: one box
    dets[1:6] = [0.1, 0.2, 0.3, 0.4, 0.9]
    off = 1 + 5 * 100
    dets[off] = 1  # class 1: one box
    dets[off + 1:off + 6] = [0.5, 0.5, 0.7, 0.8, 0.6]
    model._frames = [{NMS: dets}]
    im = hp_any.VDevice().create_infer_model(path)
    im.output(NMS).set_format_order(hp_any.FormatOrder.HAILO_NMS_BY_SCORE)
    if _version(hp_any) == "4.23":
        with pytest.raises(Exception, match="not supported in python API"):
            _ = im.output(NMS).shape

        class _Configured:  # configure() itself is not modelled for BY_SCORE by the 4.23 double
            def create_bindings(self, **kw):
                raise AssertionError("not reached")

        with pytest.raises(ValueError, match="HAILO_NMS_BY_SCORE, which pyhailort 4.23.0 cannot hand out"):
            hailort.make_bindings(None, _Configured(), infer_model=im)
        return
    im.output(NMS).set_format_type(hp_any.FormatType.FLOAT32)
    with pytest.raises(Exception, match="should be HAILO_FORMAT_TYPE_UINT8"):
        im.configure()
    im.output(NMS).set_format_type(hp_any.FormatType.UINT8)
    hb = hailort.make_bindings(None, im.configure(), input_buffers=_inputs())
    d = hb.run(1000)
    assert d.class_ids.tolist() == [0, 1]
    np.testing.assert_array_equal(d.scores, np.float32([0.9, 0.6]))
    np.testing.assert_array_equal(d.boxes, np.float32([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.7, 0.8]]))


def test_disable_pp_decode_vstreams(hp52, tmp_path, monkeypatch):
    """A 5.x device with configure() (not a Hailo-10H) under HAILO_DISABLE_PP: the output vstreams
    hand out device buffers shaped as the hw shape; decode_vstreams reads them as such."""
    monkeypatch.setenv("HAILO_DISABLE_PP", "1")
    path = _hef(tmp_path, renamed=False)
    _, frames, ng = _model(hp52, path)
    hef = hp52.HEF(path)
    vdevice = hp52.VDevice()
    network_group = vdevice.configure(hef)[0]
    in_params = hp52.InputVStreamParams.make(network_group, format_type=hp52.FormatType.UINT8)
    out_params = hp52.OutputVStreamParams.make(network_group)
    decoder = hd.Decoder(hailort.config_from_hailo(network_group, hef_path=path, **SIGMOID))
    want = _host_reference(path, frames, ng, **SIGMOID)
    with hp52.InputVStreams(network_group, in_params) as ins, hp52.OutputVStreams(network_group, out_params) as outs:
        for k in range(2):
            ins.get().send(np.zeros((1, SIZE, SIZE, 3), np.uint8))
            assert_equivalent_detections(hailort.decode_vstreams(decoder, outs), want[k])
