"""Shared fixtures: the real model outputs (uint8 in the package, float heads + references here)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # reference_decoder, random_cases

import hailo_decode as hd  # noqa: E402
from hailo_decode.demo_data import demo_config, load_demo_frames  # noqa: E402
from tappas.plugin_host import LINES as TAPPAS_LINES, Built, build as build_tappas  # noqa: E402

HEAD_KEYS = (("box_8", "cls_8", 8), ("box_16", "cls_16", 16), ("box_32", "cls_32", 32))
FAKE_ROOT = TESTS / "fake_hailo_platform"
FAKE_ROOT_52 = TESTS / "fake_hailo_platform_52"


def _drop_hailo_platform(monkeypatch):
    for name in [m for m in sys.modules if m == "hailo_platform" or m.startswith("hailo_platform.")]:
        monkeypatch.delitem(sys.modules, name)


def _use_double(monkeypatch, root):
    _drop_hailo_platform(monkeypatch)
    monkeypatch.syspath_prepend(str(root))
    import hailo_platform
    assert Path(hailo_platform.__file__).resolve().is_relative_to(root)
    from hailo_platform import _fake_device
    _fake_device.clear()
    yield hailo_platform
    _fake_device.clear()
    for name in [m for m in sys.modules if m == "hailo_platform" or m.startswith("hailo_platform.")]:
        del sys.modules[name]


@pytest.fixture
def hp(monkeypatch):
    """The hailo_platform test double (tests/fake_hailo_platform, HailoRT 4.23), for this test only."""
    yield from _use_double(monkeypatch, FAKE_ROOT)


@pytest.fixture
def hp52(monkeypatch):
    """The HailoRT 5.2 double (tests/fake_hailo_platform_52), for this test only."""
    yield from _use_double(monkeypatch, FAKE_ROOT_52)


@pytest.fixture(params=["4.23", "5.2"])
def hp_any(request, monkeypatch):
    """Each double in turn: the test runs under HailoRT 4.23's and 5.2's pyhailort."""
    yield from _use_double(monkeypatch, FAKE_ROOT if request.param == "4.23" else FAKE_ROOT_52)


@pytest.fixture(scope="session")
def uint8_data():
    return load_demo_frames()


@pytest.fixture(scope="session")
def float_data():
    with np.load(TESTS / "fixtures" / "fall_float.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def float_config(data, **settings) -> hd.DecoderConfig:
    outputs, heads = [], []
    for box, cls, stride in HEAD_KEYS:
        for key in (box, cls):
            outputs.append(hd.OutputInfo(key, data[key].shape[1:], "float32", "NHWC"))
        heads.append(hd.Head(box, cls, stride))
    return hd.DecoderConfig(outputs, heads, image_size=tuple(int(v) for v in data["input_hw"]), **settings)


def float_frames(data):
    """Float heads as float32 with a batch axis, keyed like float_config's outputs."""
    return {k: np.ascontiguousarray(data[k], dtype=np.float32) for b, c, _ in HEAD_KEYS for k in (b, c)}


def uint8_frames(data):
    return {f"fall/{k}": data[k] for b, c, _ in HEAD_KEYS for k in (b, c)}


def assert_same_detections(a, b):
    """Identical Detections (or lists of them), order included."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_detections(x, y)
        return
    assert isinstance(a, hd.Detections) and isinstance(b, hd.Detections)
    np.testing.assert_array_equal(a.class_ids, b.class_ids)
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.boxes, b.boxes)
    assert a.box_format == b.box_format


def assert_equivalent_detections(a, b, box_atol=1e-6):
    """The same detections (order, classes and scores bit for bit), boxes equal to within box_atol
    of the image size: uint8 box tensors take the table-driven softmax, their dequantized float32
    values the float one; the two agree to float rounding."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_equivalent_detections(x, y, box_atol)
        return
    np.testing.assert_array_equal(a.class_ids, b.class_ids)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.box_format == b.box_format
    size = 1 if a.box_format.endswith("normalized") else max(a.image_size)
    np.testing.assert_allclose(a.boxes, b.boxes, rtol=0, atol=box_atol * size)


def optional_package(name):
    """An optional package the test extra installs: skipped without it on a developer's machine,
    a failure in CI (CI=true), where `pip install ".[test]"` must have brought it."""
    import importlib
    import os
    import warnings

    if os.environ.get("CI"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # supervision warns at import when OpenCV is absent
        return pytest.importorskip(name)


def reference_set(data, name, frame):
    sel = data[f"{name}_frame"] == frame
    return data[f"{name}_xyxy"][sel], data[f"{name}_scores"][sel], data[f"{name}_classes"][sel]


__all__ = ["HEAD_KEYS", "assert_same_detections", "assert_equivalent_detections", "float_config", "float_frames", "uint8_frames", "reference_set", "demo_config",
           "optional_package"]


@pytest.fixture(scope="session")
def tappas_builds(tmp_path_factory):
    """line -> the TAPPAS plugin and its test host built for that header line (once a session)."""
    return lambda line: build_tappas(line, tmp_path_factory)


@pytest.fixture(params=TAPPAS_LINES)
def built(request, tappas_builds) -> Built:
    """The plugin and host, for each TAPPAS header line (5.1, 3.31) in turn."""
    return tappas_builds(request.param)
