"""Issue 28, "nothing silent": every public entry point given a mistaken value of each kind answers
with a clear exception (or warning) whose message names the culprit, never with a result.

Entry points: OutputInfo (quantization), decode_hailo_nms (buffer sizes), Decoder.decode and
diagnose (wrong arrays, one shared check), read_hef (corrupted bytes, an NMS op's image side),
the `hailo-decode` command (every command and option: one line, exit status 2, no traceback),
and, in a test of their own, DecoderConfig's settings and the NMS JSON's keys."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode.formats import by_class
from hailo_decode.hef import HefError, read_hef

import hef_writer as w
from fuzz.cli_cases import check_outcome, make_files, run_cli
from fuzz.decoder_cases import fuzz_settings

SETTINGS = fuzz_settings(60)


def _small_config(dtype="uint8", **kw):
    q = dict(zp=3.0, scale=0.1) if dtype != "float32" else {}
    outs = [hd.OutputInfo("m/box", (2, 2, 64), dtype, **q), hd.OutputInfo("m/cls", (2, 2, 3), dtype, **q)]
    return hd.DecoderConfig(outs, [hd.Head("m/box", "m/cls", 8)], image_size=(16, 16), **kw)


# ------------------------------------------------------------------------------------------------
# OutputInfo: quantization is required where the dtype is quantized
# ------------------------------------------------------------------------------------------------
@SETTINGS
@given(dtype=st.sampled_from(["uint8", "uint16", None]), given_q=st.sampled_from([(), ("zp",), ("scale",)]),
       name=st.text("abcxyz/_0123456789", min_size=1, max_size=12),
       channels=st.integers(1, 70), order=st.sampled_from(["NHWC", "FCR", "F8CR"]))
def test_quantized_output_without_its_quantization_is_refused(dtype, given_q, name, channels, order):
    kw = {k: {"zp": 7.0, "scale": 0.5}[k] for k in given_q}
    args = (name, (2, 3, channels)) + (() if dtype is None else (dtype,))
    with pytest.raises(ValueError) as e:
        hd.OutputInfo(*args, order=order, **kw)
    msg = str(e.value)
    assert repr(name) in msg and (dtype or "uint8") in msg
    assert all(f"{k} " in msg or f"{k} and" in msg for k in ("zp", "scale") if k not in given_q)  # what is missing
    assert "zp= and scale=" in msg and "scale=1.0, zp=0.0" in msg  # what to do, both ways


def test_explicit_identity_reads_raw_integers_and_float32_needs_nothing():
    raw = hd.OutputInfo("r", (1, 1, 2), "uint8", scale=1.0, zp=0.0)
    assert (raw.zp, raw.scale) == (0.0, 1.0)
    f = hd.OutputInfo("f", (1, 1, 2), "float32")
    assert (f.zp, f.scale) == (0.0, 1.0)


# ------------------------------------------------------------------------------------------------
# decode_hailo_nms: a buffer whose size does not fit the counts given
# ------------------------------------------------------------------------------------------------
@SETTINGS
@given(nc=st.integers(1, 12), mpc=st.integers(0, 9), wrong_nc=st.integers(1, 40), wrong_mpc=st.integers(0, 120),
       give_mpc=st.booleans())
def test_a_flat_buffer_that_does_not_fit_the_counts_is_refused(nc, mpc, wrong_nc, wrong_mpc, give_mpc):
    size = by_class.buffer_size(nc, mpc)
    flat = np.zeros(size, np.float32)
    if give_mpc:
        assume((wrong_nc, wrong_mpc) != (nc, mpc) and by_class.buffer_size(wrong_nc, wrong_mpc) != size)
        kw = dict(num_classes=wrong_nc, max_per_class=wrong_mpc)
    else:
        fits = size % wrong_nc == 0 and (size // wrong_nc - 1) % 5 == 0
        assume(not fits)
        kw = dict(num_classes=wrong_nc)
    with pytest.raises(ValueError) as e:
        hd.decode_hailo_nms(flat, **kw)
    msg = str(e.value)
    assert f"frame of {size} float32 values" in msg and f"num_classes={wrong_nc}" in msg
    if give_mpc:
        assert f"max_per_class={wrong_mpc}" in msg and str(by_class.buffer_size(wrong_nc, wrong_mpc)) in msg
    # the right counts read it
    assert len(hd.decode_hailo_nms(flat, num_classes=nc, max_per_class=mpc)) == 0


def test_tf_and_list_forms_that_do_not_fit_max_per_class_are_refused():
    dets = hd.Detections(np.array([[0.1, 0.1, 0.2, 0.2], [0.3, 0.3, 0.4, 0.4]], np.float32), [0.9, 0.8], [1, 1],
                         num_classes=2)
    tf = dets.to_hailo_nms(tf_format=True, max_per_class=5)
    with pytest.raises(ValueError, match=r"max_per_class=7, but the tf_nms_format array .* has shape \(2, 5, 5\)"):
        hd.decode_hailo_nms(tf, max_per_class=7)
    rows = dets.to_hailo_nms()
    with pytest.raises(ValueError, match="class 1: 2 boxes, more than max_per_class=1"):
        hd.decode_hailo_nms(rows, max_per_class=1)


# ------------------------------------------------------------------------------------------------
# Decoder.decode and diagnose: wrong arrays, refused alike by one check
# ------------------------------------------------------------------------------------------------
WRONG = st.sampled_from(["float32", "float64", "int8", "uint16", "uint8", "int64", "missing", "extra", "shape", "list"])


@SETTINGS
@given(out_dtype=st.sampled_from(["uint8", "uint16", "float32"]), wrong=WRONG, which=st.sampled_from(["m/box", "m/cls"]))
def test_decode_and_diagnose_refuse_wrong_arrays_alike(out_dtype, wrong, which):
    dec = hd.Decoder(_small_config(out_dtype))
    raw = {o.name: np.zeros(o.shape, out_dtype) for o in dec.config.outputs}
    assume(wrong != out_dtype)
    if wrong == "missing":
        del raw[which]
    elif wrong == "extra":
        raw["m/other"] = np.zeros(3, out_dtype)
    elif wrong == "shape":
        raw[which] = np.zeros((2, 2, 5), out_dtype)
    elif wrong == "list":
        raw[which] = raw[which].tolist()
    else:
        raw[which] = raw[which].astype(wrong)
    with pytest.raises((ValueError, TypeError)) as decoding:
        dec(raw)
    culprit = "m/other" if wrong == "extra" else which
    assert culprit in str(decoding.value)
    if wrong == "extra":
        return  # diagnose reads the outputs it knows; a recording may hold more
    with pytest.raises((ValueError, TypeError)) as diagnosing:
        dec.diagnose(raw)
    assert which in str(diagnosing.value)
    if wrong not in ("missing", "shape", "list"):  # a dtype: the very same check and message
        assert type(diagnosing.value) is type(decoding.value) is TypeError
        assert str(diagnosing.value) == str(decoding.value)


# ------------------------------------------------------------------------------------------------
# read_hef: an NMS op's image side, and corrupted bytes
# ------------------------------------------------------------------------------------------------
BAD_SIDES = st.one_of(st.floats(max_value=-1e-300), st.floats(min_value=1e-300, max_value=0.999),
                      st.floats(min_value=1e6), st.just(float("nan")), st.just(float("inf")))


@SETTINGS
@given(side=BAD_SIDES, field=st.sampled_from(["image_height", "image_width"]))
def test_an_nms_op_image_side_that_is_no_size_is_refused_by_the_reader(side, field):
    hw = (side, 640.0) if field == "image_height" else (640.0, side)
    data = w.yolov8_hef(1, image_hw=hw)
    with pytest.raises(HefError) as e:
        read_hef(data)
    assert field in str(e.value) and "yolov8_nms_op" in str(e.value)
    with pytest.raises(HefError, match=field):
        hd.DecoderConfig.from_hef(data)


@SETTINGS
@given(cut=st.floats(0.0, 0.999), flips=st.lists(st.tuples(st.floats(0, 0.999), st.integers(1, 255)), max_size=4))
def test_corrupted_hef_bytes_give_a_named_hef_error_or_a_reading(cut, flips):
    data = bytearray(w.yolov8_hef(1))
    for where, bits in flips:
        data[int(where * len(data))] ^= bits
    data = data[:max(1, int(len(data) * (1 - cut)))] if cut > 0.5 else data
    try:
        info = read_hef(bytes(data))
    except HefError as e:
        assert str(e).strip(), "a HefError must say what is wrong"
        return
    assert info.network_groups is not None


# ------------------------------------------------------------------------------------------------
# The `hailo-decode` command: one line naming the file or option, exit status 2, no traceback
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return make_files(tmp_path_factory.mktemp("cli"))


def _eval(f, frames="recording", gt="gt", *extra):
    return ["eval", "--demo-model", "--frames", f[frames], "--gt", f[gt], *extra]


# (argv from the files, what the one line must name)
CLI_MISTAKES = [
    # options that do nothing in their mode
    (lambda f: ["bench", "--tasks", "--plot", f["out_file"] + ".png"], "--plot"),
    (lambda f: ["demo", "--task", "pose", "--save", f["folder"]], "--save"),
    (lambda f: ["demo", "--task", "seg", "--save", f["folder"]], "--save"),
    (lambda f: ["demo", "--task", "obb", "--save", f["folder"]], "--save"),
    # numbers out of their range
    (lambda f: ["demo", "--seconds", "-1"], "--seconds"),
    (lambda f: ["demo", "--seconds", "nan"], "--seconds"),
    (lambda f: ["demo", "--seconds", "0", "--threshold", "nan"], "--threshold"),
    (lambda f: _eval(f, "recording", "gt", "--batch", "0"), "--batch"),
    # files to read: missing, a folder, garbage
    (lambda f: ["inspect", f["missing"]], "missing"),
    (lambda f: ["inspect", f["folder"]], "folder"),
    (lambda f: ["inspect", f["empty"]], "empty"),
    (lambda f: ["inspect", f["random"]], "random"),
    (lambda f: ["inspect", f["hef_truncated"]], "hef_truncated"),
    (lambda f: ["inspect", f["hef_zero_side"]], "image_height"),
    (lambda f: ["inspect", f["hef"], "--network-group", "nope"], "--network-group"),
    (lambda f: ["inspect", f["hef"], "--frames", f["missing"]], "--frames"),
    (lambda f: ["inspect", f["hef"], "--frames", f["text"]], "--frames"),
    (lambda f: ["inspect", f["hef"], "--frames", f["npy"]], "--frames"),
    (lambda f: ["inspect", f["hef"], "--frames", f["npz_garbage"]], "--frames"),
    (lambda f: ["inspect", f["hef"], "--frames", f["npz_truncated"]], "--frames"),
    (lambda f: ["inspect", f["hef"], "--frames", f["npz_object"]], "--frames"),
    (lambda f: ["inspect", f["hef"], "--frames", f["recording"]], "--frames"),  # another model's outputs
    (lambda f: _eval(f, "missing"), "--frames"),
    (lambda f: _eval(f, "empty"), "--frames"),
    (lambda f: _eval(f, "npz_garbage"), "--frames"),
    (lambda f: _eval(f, "npz_truncated"), "--frames"),
    (lambda f: _eval(f, "npz_floats"), "--frames"),  # float arrays for uint8 outputs
    (lambda f: _eval(f, "npy"), "--frames"),
    (lambda f: _eval(f, "recording", "missing"), "--gt"),
    (lambda f: _eval(f, "recording", "json_list"), "--gt"),
    (lambda f: _eval(f, "recording", "json_bad"), "--gt"),
    (lambda f: _eval(f, "recording", "gt_no_sizes"), "--gt"),
    (lambda f: _eval(f, "recording", "random"), "--gt"),
    (lambda f: ["eval", "--hef", f["random"], "--frames", f["recording"], "--gt", f["gt"]], "--hef"),
    (lambda f: ["eval", "--hef", f["hef_zero_side"], "--frames", f["recording"], "--gt", f["gt"]], "image_height"),
    # places to write
    (lambda f: ["demo", "--seconds", "0", "--save", f["text"]], "--save"),
    (lambda f: ["demo", "--seconds", "0", "--save", f["under_a_file"]], "--save"),
    (lambda f: ["bench", "--json", f["out_in_missing_folder"]], "--json"),
    (lambda f: ["bench", "--json", f["folder"]], "--json"),
    (lambda f: ["bench", "--plot", f["out_file"] + ".nope"], "--plot"),
    (lambda f: _eval(f, "recording", "gt", "--json", f["out_in_missing_folder"]), "--json"),
]


@pytest.mark.parametrize("make_argv, culprit", CLI_MISTAKES)
def test_each_cli_mistake_is_one_line_naming_it(files, make_argv, culprit):
    pytest.importorskip("pycocotools")
    argv = make_argv(files)
    rc, out, err = run_cli(argv)
    assert not check_outcome(argv, (rc, out, err)), (argv, rc, err)
    assert rc == 2, (argv, out, err)
    assert culprit in err, (argv, err)


@SETTINGS
@given(case=st.sampled_from(CLI_MISTAKES), command_line_noise=st.sampled_from([[], ["--semantics", "ultralytics"]]))
def test_cli_mistakes_stay_named_whatever_else_is_given(files, case, command_line_noise):
    """The same mistakes with a valid option added where the command has it: still the mistake
    named, still one line."""
    pytest.importorskip("pycocotools")
    make_argv, culprit = case
    argv = make_argv(files)
    if argv[0] in ("demo", "inspect", "eval") and "--semantics" not in argv:
        argv = argv + command_line_noise
    rc, out, err = run_cli(argv)
    assert rc == 2 and culprit in err and not check_outcome(argv, (rc, out, err)), (argv, err)


def test_cli_good_lines_still_work(files):
    pytest.importorskip("pycocotools")
    for argv in (["inspect", files["hef"]], ["inspect", files["hef"], "--json"], ["demo", "--seconds", "0"],
                 ["bench", "--quick", "--json", files["out_file"]], _eval(files)):
        rc, out, err = run_cli(argv)
        assert rc == 0 and not check_outcome(argv, (rc, out, err)), (argv, err)


def test_cli_version_and_help_are_for_users():
    rc, out, _ = run_cli(["--version"])
    assert rc == 0 and out.strip() == f"hailo-decode {hd.__version__}"
    for command in ([], ["demo"], ["bench"], ["inspect"], ["eval"]):
        rc, out, _ = run_cli([*command, "--help"])
        assert rc == 0
        for note in ("top floor", "hailo_decode.", "add_parser", "(see BENCHMARKS.md)"):
            assert note not in out, (command, note)


def test_cmakedir_without_the_cmake_files_is_a_user_error(tmp_path, monkeypatch):
    """`hailo-decode --cmakedir` where the CMake files are not installed (an editable install): one
    line naming the option, where it looked and what to do, exit status 2."""
    from hailo_decode import cmake_info

    monkeypatch.setattr(cmake_info, "_PACKAGE_DIR", tmp_path)
    argv = ["--cmakedir"]
    rc, out, err = run_cli(argv)
    assert (rc, out) == (2, "") and not check_outcome(argv, (rc, out, err)), err
    assert err.startswith("hailo-decode --cmakedir: ") and str(tmp_path) in err and "install the package" in err


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`hailo-decode inspect x.hef | head -1`: status 141 (as other tools under SIGPIPE), nothing on
    stderr (the bytes are piped into a reader that closes at once)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")  # an editable install's rebuild would print first
    hef = tmp_path / "m.hef"
    hef.write_bytes(w.yolov8_hef(1))
    for argv in (["inspect", str(hef)], ["demo", "--seconds", "0"]):
        p = subprocess.Popen([sys.executable, "-c", "import sys; from hailo_decode.cli import main; sys.exit(main())",
                              *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        p.stdout.read(1)
        p.stdout.close()  # the reader goes away after one byte
        err = p.stderr.read().decode()
        rc = p.wait(timeout=120)
        assert rc in (0, 141) and "Traceback" not in err and "BrokenPipe" not in err, (argv, rc, err)


def test_broken_pipe_in_process_gives_141(monkeypatch):
    from hailo_decode.cli import inspect as inspect_cmd

    def closed(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(inspect_cmd, "run_inspect", closed)
    rc, _, err = run_cli(["inspect", "x.hef"])
    assert (rc, err) == (141, "")


def test_a_real_bug_keeps_its_traceback(monkeypatch, files):
    """Only user mistakes are one line: an unexpected exception is not swallowed."""
    from hailo_decode.cli import inspect as inspect_cmd

    monkeypatch.setattr(inspect_cmd, "inspect_report", lambda *a, **k: {}["a bug"])
    with pytest.raises(KeyError, match="a bug"):
        run_cli(["inspect", files["hef"]])


def test_install_hints_fit_where_the_package_came_from(monkeypatch):
    from hailo_decode import _install

    class Dist:
        def __init__(self, direct_url):
            self.direct_url = direct_url
            self.requires = ['numpy>=1.21', 'pycocotools>=2.0.6; extra == "coco"', 'pytest>=7; extra == "test"']

        def read_text(self, name):
            return self.direct_url if name == "direct_url.json" else None

    monkeypatch.setattr(_install, "_distribution", lambda: Dist(None))
    assert _install.install_hint("coco") == 'pip install "hailo-decode[coco]"'
    monkeypatch.setattr(_install, "_distribution",
                        lambda: Dist(json.dumps({"url": "file:///src/hailo-decode", "dir_info": {"editable": True}})))
    assert _install.install_hint("coco") == 'pip install "pycocotools>=2.0.6"'
    monkeypatch.setattr(_install, "_distribution", lambda: None)
    assert _install.install_hint("coco") == 'pip install ".[coco]" in the source checkout'


# ------------------------------------------------------------------------------------------------
# DecoderConfig's settings and the NMS JSON's keys (the C++ core's rules, issue 28)
# ------------------------------------------------------------------------------------------------
NMS_JSON = {"nms_scores_th": 0.2, "nms_iou_th": 0.7, "image_dims": [16, 16], "max_proposals_per_class": 100,
            "classes": 3, "regression_length": 16,
            "bbox_decoders": [{"name": "d0", "stride": 8, "reg_layer": "m/box", "cls_layer": "m/cls"}]}


def _json_outputs():
    return [hd.OutputInfo("m/box", (2, 2, 64), "uint8", zp=3.0, scale=0.1),
            hd.OutputInfo("m/cls", (2, 2, 3), "uint8", zp=0.0, scale=1 / 255)]


SETTING_MISTAKES = [
    (dict(iou_threshold=-0.5), "iou_threshold"),
    (dict(iou_threshold=1.5), "iou_threshold"),
    (dict(score_threshold=-0.1), "score_threshold"),
    (dict(score_threshold=1.5), "score_threshold"),
    (dict(score_threshold=float("nan")), "score_threshold"),
    (dict(max_per_class=-1), "max_per_class"),
    (dict(score_thresh=0.3), "score_threshold"),  # the closest known setting
]


@pytest.mark.parametrize("kw, culprit", SETTING_MISTAKES)
def test_decoder_config_settings_and_nms_json_keys(kw, culprit):
    """The settings' ranges, unknown keys named with the closest known one, stride x grid = input
    size, an NMS JSON that is not an object: the other half of issue 28 (DecoderConfig and the
    C++ core's setup), walked here as the rest is."""
    with pytest.raises((ValueError, TypeError)) as e:
        _small_config(**kw)
    assert culprit in str(e.value)


@pytest.mark.parametrize("mutate, culprit", [
    (lambda d: d.update(nms_iou_thr=d.pop("nms_iou_th")), "nms_iou_th"),        # misspelt: the closest key named
    (lambda d: d.update(nms_scores_thr=d.pop("nms_scores_th")), "nms_scores_th"),
    (lambda d: d["bbox_decoders"][0].update(strid=8), "stride"),
    (lambda d: d.update(nms_iou_th=-0.5), "nms_iou_th"),
    (lambda d: d["bbox_decoders"][0].update(stride=16), "stride"),             # 16 x grid 2 = 32, not 16
])
def test_nms_json_mistakes_are_named(mutate, culprit):
    doc = json.loads(json.dumps(NMS_JSON))
    mutate(doc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises((ValueError, TypeError, UserWarning)) as e:
            hd.DecoderConfig.from_nms_json(doc, _json_outputs())
    assert culprit in str(e.value)


def test_an_nms_json_whose_top_level_is_a_list_is_named():
    with pytest.raises((ValueError, TypeError)) as e:
        hd.DecoderConfig.from_nms_json(json.dumps([NMS_JSON]), _json_outputs())
    assert "object" in str(e.value) or "list" in str(e.value) or "array" in str(e.value)


def test_heads_whose_stride_disagrees_with_the_grid_are_named():
    with pytest.raises(ValueError) as e:
        _small_config_heads(stride=16)
    assert "stride" in str(e.value) and "m/box" in str(e.value)


def _small_config_heads(stride):
    outs = _json_outputs()
    return hd.DecoderConfig(outs, [hd.Head("m/box", "m/cls", stride)], image_size=(16, 16))

