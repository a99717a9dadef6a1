"""Every ```python block of README.md and docs/*.md runs, and every relative link points at a file.

The blocks of one page run in order in one namespace (as a reader reads them), in a fresh
temporary directory. A block that needs what a page cannot show (a device, a real HEF, recorded
frames) says so with an HTML comment on the line before it:

    <!-- docs-test: setup NAME[, NAME...] -->   run setup_NAME(ctx) first; it puts names in the
                                                namespace and files in the directory
    <!-- docs-test: skip (reason) -->          not run; the reason is required

Devices come from the hailo_platform test double (tests/fake_hailo_platform, as tests/test_hailort.py
uses it), HEF files from tests/hef_writer.py, frames from the real model outputs bundled with the
package (hailo_decode.demo_data). Blocks in other languages are not run; README's two
fresh-machine commands are checked word for word (.ci/run and new users rely on them).
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest

import hailo_decode as hd
import hef_writer as hw
from conftest import FAKE_ROOT, _drop_hailo_platform
from hailo_decode import demo_data

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))

FRESH_MACHINE_COMMANDS = ('pip install . && hailo-decode demo', 'pip install ".[test]" && python -m pytest -q')

# Pages another engineer is writing: links to them may dangle until they exist.
# docs/gstreamer.md (issue 27: the GStreamer page, TAPPAS hailofilter and hailo-apps) is written
# apart from the rest of the guide; drop it from here once it is in the tree.
PENDING_PAGES = {ROOT / "docs" / "gstreamer.md"}


# -- reading the Markdown --------------------------------------------------------------------------

_FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int                      # 1-based line of the first code line
    lang: str
    code: str
    directive: Optional[str] = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def skip_reason(self) -> Optional[str]:
        if self.directive is None or not self.directive.startswith("skip"):
            return None
        m = re.fullmatch(r"skip\s*\((.+)\)", self.directive)
        return m.group(1).strip() if m else ""

    @property
    def setups(self) -> List[str]:
        if self.directive is None or not self.directive.startswith("setup"):
            return []
        return [name.strip() for name in self.directive[len("setup"):].split(",") if name.strip()]


def blocks_of(page: Path) -> List[Block]:
    """The fenced code blocks of a page, with the docs-test directive on the line before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: List[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        d = _DIRECTIVE.match(lines[k]) if k >= 0 else None
        out.append(Block(page, i + 2, lang, "\n".join(body) + "\n", d.group(1) if d else None))
        i = j + 1
    return out


def python_blocks(page: Path) -> List[Block]:
    return [b for b in blocks_of(page) if b.lang in ("python", "py")]


def _directives(page: Path) -> List[tuple]:
    """(line, text) of every docs-test comment outside code blocks."""
    out, in_code = [], False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code and (m := _DIRECTIVE.match(line)):
            out.append((n, m.group(1)))
    return out


# -- the setups ------------------------------------------------------------------------------------

@dataclass
class Ctx:
    """What a setup works with: the page's directory (the current directory), pytest's monkeypatch,
    and what it has made so far (so that one setup can build on another's files)."""
    tmp: Path
    monkeypatch: Any
    done: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    cleanups: List[Callable[[], None]] = field(default_factory=list)

    def need(self, name: str) -> Dict[str, Any]:
        if name not in self.done:
            self.done[name] = SETUPS[name](self)
        return self.done[name]


SETUPS: Dict[str, Callable[[Ctx], Dict[str, Any]]] = {}


def setup(fn: Callable[[Ctx], Dict[str, Any]]) -> Callable[[Ctx], Dict[str, Any]]:
    SETUPS[fn.__name__[len("setup_"):]] = fn
    return fn


# The bundled 2-class YOLOv8 ("fall", logits) under the layer names of a yolov8n HEF.
YOLOV8N_LAYERS = (("box_8", "conv41"), ("cls_8", "conv42"), ("box_16", "conv52"), ("cls_16", "conv53"),
                  ("box_32", "conv62"), ("cls_32", "conv63"))
# The 80-class outputs of docs/decoding.md's hand-written list (yolov8n at 640, sigmoid on chip).
YOLOV8N_80 = (("conv41", (80, 80, 64), "FCR", 84.0, 0.089), ("conv42", (80, 80, 80), "NHWC", 0.0, 1 / 255),
              ("conv52", (40, 40, 64), "FCR", 99.0, 0.091), ("conv53", (40, 40, 80), "NHWC", 0.0, 1 / 255),
              ("conv62", (20, 20, 64), "FCR", 116.0, 0.074), ("conv63", (20, 20, 80), "NHWC", 0.0, 1 / 255))


def _yolov8n_80_outputs() -> List[hd.OutputInfo]:
    return [hd.OutputInfo(f"yolov8n/{n}", shape, "uint8", order, zp=zp, scale=scale)
            for n, shape, order, zp, scale in YOLOV8N_80]


def _yolov8n_80_frames(batch: int = 1) -> List[Dict[str, np.ndarray]]:
    """Frames of a yolov8n-like 80-class model (hailo_decode.bench's workload: real box tensors,
    objects painted on real background scores) under the names of YOLOV8N_80."""
    from hailo_decode.bench import yolov8n_like
    _, frames = yolov8n_like(batch=batch, seed=1)
    rename = {"box8": "conv41", "cls8": "conv42", "box16": "conv52", "cls16": "conv53", "box32": "conv62",
              "cls32": "conv63"}
    return [{f"yolov8n/{rename[k.split('/')[1]]}": np.ascontiguousarray(v[i]) for k, v in frames.items()}
            for i in range(batch)]


@setup
def setup_yolov8n_raw(ctx: Ctx) -> Dict[str, Any]:
    """`outputs` (docs/decoding.md's 80-class list) and `raw`, one frame for them."""
    return {"outputs": _yolov8n_80_outputs(), "raw": _yolov8n_80_frames()[0]}


def _nms_json(classes: int, names=("conv41", "conv42", "conv52", "conv53", "conv62", "conv63")) -> Dict[str, Any]:
    return {"nms_scores_th": 0.2, "nms_iou_th": 0.7, "image_dims": [640, 640], "max_proposals_per_class": 100,
            "classes": classes, "regression_length": 16, "background_removal": False, "background_removal_index": 0,
            "bbox_decoders": [{"name": f"bbox_decoder{names[2 * k][4:]}", "stride": s, "reg_layer": names[2 * k],
                               "cls_layer": names[2 * k + 1]} for k, s in enumerate((8, 16, 32))]}


@setup
def setup_nms_json(ctx: Ctx) -> Dict[str, Any]:
    """yolov8n_nms_config.json for the 80-class outputs, `outputs` and `raw`."""
    (ctx.tmp / "yolov8n_nms_config.json").write_text(json.dumps(_nms_json(80)))
    return ctx.need("yolov8n_raw")


def _fall_data() -> Dict[str, np.ndarray]:
    return demo_data.load_demo_frames()


@setup
def setup_hef_files(ctx: Ctx) -> Dict[str, Any]:
    """yolov8n_custom.hef: a HEF without NMS whose six outputs are the bundled 2-class YOLOv8's
    (per-tensor uint8, class outputs logits), named yolov8n/conv41 ...; yolov8n_nms_config.json
    for it; `raw`, one recorded frame of it."""
    data = _fall_data()
    layers = [hw.Layer("yolov8n/input_layer1", (640, 640, 3), "NHWC", output=False, limvals=(0.0, 255.0))]
    for pad, (key, conv) in enumerate(YOLOV8N_LAYERS):
        h, w, c = data[key].shape[1:]
        box = key.startswith("box")  # box layers FCR; class layers NHCW, rows padded to 8 as compiled HEFs pad them
        layers.append(hw.Layer(f"yolov8n/{conv}", (h, w, c), "FCR" if box else "NHCW",
                               padded=None if box else (h, w + 8, c), zp=float(data[f"zp_{key}"]),
                               scale=float(data[f"scale_{key}"]), pad_index=10 + pad))
    group = hw.network_group("yolov8n", layers)
    (ctx.tmp / "yolov8n_custom.hef").write_bytes(hw.wrap(hw.hef_proto([group])))
    (ctx.tmp / "yolov8n_nms_config.json").write_text(json.dumps(_nms_json(2)))
    raw = {f"yolov8n/{conv}": data[key][0] for key, conv in YOLOV8N_LAYERS}
    return {"raw": raw}


def _fake_hailo_platform(ctx: Ctx):
    """The hailo_platform double on sys.path for this page only; its _fake_device module."""
    if "_fake_device" not in ctx.done:
        _drop_hailo_platform(ctx.monkeypatch)
        ctx.monkeypatch.syspath_prepend(str(FAKE_ROOT))
        import hailo_platform
        assert Path(hailo_platform.__file__).resolve().is_relative_to(FAKE_ROOT)
        from hailo_platform import _fake_device
        _fake_device.clear()

        def drop():
            _fake_device.clear()
            for name in [m for m in sys.modules if m == "hailo_platform" or m.startswith("hailo_platform.")]:
                del sys.modules[name]
        ctx.cleanups.append(drop)
        ctx.done["_fake_device"] = {"module": _fake_device}
    return ctx.done["_fake_device"]["module"]


def _images(n: int) -> np.ndarray:
    return np.zeros((n, 640, 640, 3), dtype=np.uint8)


@setup
def setup_hailort(ctx: Ctx) -> Dict[str, Any]:
    """A device (the hailo_platform double) running yolov8n_custom.hef (setup_hef_files), which
    hands out the bundled real frames one after another; `camera` (3 images), `frames` (a batch
    of 8 images), `handle` (collects what it is given)."""
    names = ctx.need("hef_files")
    fd = _fake_hailo_platform(ctx)
    data = _fall_data()
    outputs = [fd.FakeOutput(f"yolov8n/{conv}", data[key].shape[1:], "uint8",
                             "FCR" if key.startswith("box") else "NHWC",
                             zp=float(data[f"zp_{key}"]), scale=float(data[f"scale_{key}"]))
               for key, conv in YOLOV8N_LAYERS]
    frames = [{f"yolov8n/{conv}": data[key][i] for key, conv in YOLOV8N_LAYERS} for i in range(len(data["box_8"]))]
    fd.register(fd.FakeModel("yolov8n", outputs, frames=frames), "yolov8n_custom.hef")
    handled: List[Any] = []
    return dict(names, camera=list(_images(3)), frames=_images(8), handle=handled.append)


@setup
def setup_nms_hef(ctx: Ctx) -> Dict[str, Any]:
    """yolov8n.hef, a HEF with HailoRT's YOLOv8 NMS op (80 classes, 100 a class), as a file and
    on the device double, whose NMS output 'yolov8n/yolov8_nms_postprocess' hands out the
    HAILO_NMS_BY_CLASS buffers of yolov8n-like frames; `frames`, 2 input images."""
    (ctx.tmp / "yolov8n.hef").write_bytes(hw.yolov8_hef(per_feature=False))
    fd = _fake_hailo_platform(ctx)
    decoder = hd.Decoder(hd.DecoderConfig(_yolov8n_80_outputs()))
    nms_name = "yolov8n/yolov8_nms_postprocess"
    device_frames = [{nms_name: decoder.decode_to_hailo_nms(f)} for f in _yolov8n_80_frames(2)]
    outputs = [fd.FakeOutput(o.name, o.shape, "uint8", o.order, zp=o.zp, scale=o.scale) for o in _yolov8n_80_outputs()]
    fd.register(fd.FakeModel("yolov8n", outputs, frames=device_frames, nms=fd.FakeNms(nms_name, 80, 100)), "yolov8n.hef")
    return {"frames": _images(2)}


@setup
def setup_nms_forms(ctx: Ctx) -> Dict[str, Any]:
    """`buffer`: a HAILO_NMS_BY_SCORE frame (80 classes x 100: 8,000 records' room); `bbox_output`:
    a yolov8_bbox_only output, float32 (1, 8400, 4 + 80)."""
    raw = _yolov8n_80_frames()[0]
    decoder = hd.Decoder(hd.DecoderConfig(_yolov8n_80_outputs()))
    buffer = decoder.decode_to_hailo_nms(raw, format="by_score")
    rng = np.random.default_rng(0)
    rows = np.zeros((1, 8400, 84), np.float32)
    centres = rng.uniform(0.1, 0.9, size=(8400, 2))
    sides = rng.uniform(0.02, 0.2, size=(8400, 2))
    rows[0, :, 0:2] = centres - sides / 2
    rows[0, :, 2:4] = centres + sides / 2
    rows[0, :, 4:] = rng.uniform(0.0, 0.1, size=(8400, 80))
    rows[0, rng.choice(8400, 20, replace=False), 4 + rng.integers(0, 80, 20)] = 0.9
    return {"buffer": buffer, "bbox_output": rows}


@setup
def setup_nms_output(ctx: Ctx) -> Dict[str, Any]:
    """`out`: what pyhailort's InferVStreams.infer returns for a NMS output, a batch of 2 frames
    (per frame, a list over 80 classes of (n, 5) arrays)."""
    decoder = hd.Decoder(hd.DecoderConfig(_yolov8n_80_outputs()))
    return {"out": [decoder(f).to_hailo_nms(num_classes=80, max_per_class=100) for f in _yolov8n_80_frames(2)]}


def _task_outputs(task: str, data: Dict[str, np.ndarray], kinds: Dict[str, str]):
    """OutputInfos and frame 0 of a bundled task file, renamed as kinds says (file key prefix ->
    the docs' prefix, e.g. "angle" -> "ang")."""
    outputs, raw = [], {}
    for s in (8, 16, 32):
        for key_kind, name_kind in kinds.items():
            key = f"{key_kind}_{s}"
            outputs.append(hd.OutputInfo(f"{name_kind}{s}", data[key].shape[1:], "uint8", "NHWC",
                                         zp=float(data[f"zp_{key}"]), scale=float(data[f"scale_{key}"])))
            raw[f"{name_kind}{s}"] = data[key][0]
    return outputs, raw


@setup
def setup_pose(ctx: Ctx) -> Dict[str, Any]:
    """`outputs` and `raw`: the bundled yolo11n-pose heads as box8/cls8/kpt8 ..."""
    outputs, raw = _task_outputs("pose", demo_data.load_task_demo("pose"), {"box": "box", "cls": "cls", "kpt": "kpt"})
    return {"outputs": outputs, "raw": raw}


@setup
def setup_obb(ctx: Ctx) -> Dict[str, Any]:
    """`outputs` and `raw`: the bundled yolo11n-obb heads as box8/cls8/ang8 ..."""
    outputs, raw = _task_outputs("obb", demo_data.load_task_demo("obb"), {"box": "box", "cls": "cls", "angle": "ang"})
    return {"outputs": outputs, "raw": raw}


@setup
def setup_seg(ctx: Ctx) -> Dict[str, Any]:
    """`outputs` and `raw`: the bundled yolo11n-seg heads as box8/cls8/mask8 ... and proto (a 320
    input); yolov8n_seg.hef with those ten outputs; yolo26n_seg.hef, a YOLO26-seg HEF (4-channel
    boxes, 640 input)."""
    data = demo_data.load_seg_demo_frames()
    outputs, raw = _task_outputs("seg", data, {"box": "box", "cls": "cls", "mask": "mask"})
    outputs.append(hd.OutputInfo("proto", data["proto"].shape[1:], "uint8", "NHWC",
                                 zp=float(data["zp_proto"]), scale=float(data["scale_proto"])))
    raw["proto"] = data["proto"][0]
    ih, iw = (int(v) for v in data["input_hw"])
    layers = [hw.Layer("seg/input_layer1", (ih, iw, 3), "NHWC", output=False, limvals=(0.0, 255.0))]
    layers += [hw.Layer(o.name, o.shape, "FCR" if o.name.startswith(("box", "mask")) else "NHCW", zp=float(o.zp),
                        scale=float(o.scale), pad_index=10 + k) for k, o in enumerate(outputs)]
    (ctx.tmp / "yolov8n_seg.hef").write_bytes(hw.wrap(hw.hef_proto([hw.network_group("seg", layers)])))
    layers = [hw.Layer("yolo26n_seg/input_layer1", (640, 640, 3), "NHWC", output=False, limvals=(0.0, 255.0))]
    pad = 10
    for s in (8, 16, 32):
        g = 640 // s
        for kind, c, zp, scale in (("box", 4, 0.0, 0.25), ("cls", 80, 200.0, 0.06), ("mask", 32, 128.0, 0.03)):
            layers.append(hw.Layer(f"yolo26n_seg/{kind}{s}", (g, g, c), "FCR", zp=zp, scale=scale, pad_index=pad))
            pad += 1
    layers.append(hw.Layer("yolo26n_seg/proto", (160, 160, 32), "NHCW", zp=30.0, scale=0.02, pad_index=pad))
    (ctx.tmp / "yolo26n_seg.hef").write_bytes(hw.wrap(hw.hef_proto([hw.network_group("yolo26n_seg", layers)])))
    return {"outputs": outputs, "raw": raw}


def _paint(rng: np.random.Generator, shape, channels_per_anchor: int, gate: int, classes_from: int, nc: int,
           anchors: int = 1) -> np.ndarray:
    """uint8 anchor-head tensor: low noise, the gate channel (objectness) high on a few cells with
    one class high there."""
    h, w, _ = shape
    x = rng.integers(0, 20, size=shape).astype(np.uint8)
    for _ in range(6):
        r, c, a = int(rng.integers(h)), int(rng.integers(w)), int(rng.integers(anchors))
        base = a * channels_per_anchor
        x[r, c, base + gate] = 230
        x[r, c, base + classes_from + int(rng.integers(nc))] = 220
    return x


@setup
def setup_yolov5(ctx: Ctx) -> Dict[str, Any]:
    """`outputs`, `raw` and yolov5s_nms_config.json: a YOLOv5s-like anchor model, 80 classes,
    outputs yolov5s/conv55, conv63, conv70 (scores on chip, zp 0, scale 1/255)."""
    rng = np.random.default_rng(5)
    names = {8: "conv55", 16: "conv63", 32: "conv70"}
    anchors = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)),
               32: ((116, 90), (156, 198), (373, 326))}
    outputs, raw = [], {}
    for s, n in names.items():
        shape = (640 // s, 640 // s, 3 * 85)
        outputs.append(hd.OutputInfo(f"yolov5s/{n}", shape, "uint8", "NHWC", zp=0.0, scale=1 / 255))
        raw[f"yolov5s/{n}"] = _paint(rng, shape, 85, 4, 5, 80, anchors=3)
    doc = {"nms_scores_th": 0.2, "nms_iou_th": 0.6, "image_dims": [640, 640], "max_proposals_per_class": 80,
           "background_removal": False, "classes": 80,
           "bbox_decoders": [{"name": f"bbox_decoder{n[4:]}", "w": [a[0] for a in anchors[s]],
                              "h": [a[1] for a in anchors[s]], "stride": s, "encoded_layer": n}
                             for s, n in names.items()]}
    (ctx.tmp / "yolov5s_nms_config.json").write_text(json.dumps(doc))
    return {"outputs": outputs, "raw": raw}


@setup
def setup_ssd(ctx: Ctx) -> Dict[str, Any]:
    """`outputs`, `raw` and mobilenet_ssd_nms_postprocess_config.json: an ssd_mobilenet_v1-like
    model (tests/test_ssd.py's Model Zoo decoders), six reg/cls pairs at 300x300, 91 classes."""
    from test_ssd import ssd_case, zoo_json
    outputs, raw, *_ = ssd_case(np.random.default_rng(8))
    (ctx.tmp / "mobilenet_ssd_nms_postprocess_config.json").write_text(json.dumps(zoo_json()))
    return {"outputs": outputs, "raw": raw}


@setup
def setup_yolox(ctx: Ctx) -> Dict[str, Any]:
    """`outputs`, `raw` and nms_config_yolox_s_leaky.json: a YOLOX-s-like model, 80 classes;
    per stride reg (4), objectness (1) and class (80) outputs named as docs/families.md names them."""
    rng = np.random.default_rng(6)
    names = {8: ("conv55", "conv56", "conv54"), 16: ("conv69", "conv70", "conv68"), 32: ("conv82", "conv83", "conv81")}
    outputs, raw = [], {}
    for s, (reg, obj, cls) in names.items():
        g = 640 // s
        r = rng.integers(100, 156, size=(g, g, 4)).astype(np.uint8)
        o = _paint(rng, (g, g, 1), 1, 0, 0, 1)
        c = rng.integers(0, 20, size=(g, g, 80)).astype(np.uint8)
        c[o[..., 0] > 200, int(rng.integers(80))] = 220
        for name, a, zp, scale in ((reg, r, 128.0, 0.05), (obj, o, 0.0, 1 / 255), (cls, c, 0.0, 1 / 255)):
            outputs.append(hd.OutputInfo(f"yolox/{name}", a.shape, "uint8", "NHWC", zp=zp, scale=scale))
            raw[f"yolox/{name}"] = a
    doc = {"nms_scores_th": 0.2, "nms_iou_th": 0.65, "image_dims": [640, 640], "max_proposals_per_class": 100,
           "classes": 80, "bbox_decoders": [{"name": f"bbox_decoder_{s}", "stride": s, "reg_layer": reg,
                                             "objectness_layer": obj, "cls_layer": cls}
                                            for s, (reg, obj, cls) in names.items()]}
    (ctx.tmp / "nms_config_yolox_s_leaky.json").write_text(json.dumps(doc))
    return {"outputs": outputs, "raw": raw}


@setup
def setup_e2e_hefs(ctx: Ctx) -> Dict[str, Any]:
    """yolov10n.hef: six DFL outputs (64-channel boxes, 80 classes), no NMS op; yolo26n.hef: six
    YOLO26 outputs (4-channel boxes, 80 classes), no NMS op."""
    (ctx.tmp / "yolov10n.hef").write_bytes(hw.yolov8_hef(nms=False, net="yolov10n"))
    layers = [hw.Layer("yolo26n/input_layer1", (640, 640, 3), "NHWC", output=False, limvals=(0.0, 255.0))]
    for k, s in enumerate((8, 16, 32)):
        g = 640 // s
        layers.append(hw.Layer(f"yolo26n/box{s}", (g, g, 4), "FCR", zp=0.0, scale=0.25, pad_index=10 + 2 * k))
        layers.append(hw.Layer(f"yolo26n/cls{s}", (g, g, 80), "NHCW", zp=200.0, scale=0.06, pad_index=11 + 2 * k))
    (ctx.tmp / "yolo26n.hef").write_bytes(hw.wrap(hw.hef_proto([hw.network_group("yolo26n", layers)])))
    return {}


@setup
def setup_mismatched_hef(ctx: Ctx) -> Dict[str, Any]:
    """yolov8n_320.hef: a 320x320 input whose NMS op says image 640x640."""
    (ctx.tmp / "yolov8n_320.hef").write_bytes(hw.yolov8_hef(input_size=320, image_hw=(640.0, 640.0), per_feature=False))
    return {}


@setup
def setup_interop(ctx: Ctx) -> Dict[str, Any]:
    """`dets` (a bundled real frame), `orig43` (another, undone to 640x480), `names`, `photo` (a
    640x480 picture) and instances_val2017.json, ground truth for images 42 and 43 (the
    detections' own boxes, as COCO categories 1 and 2)."""
    data = _fall_data()
    decoder = hd.Decoder(demo_data.demo_config(data))
    frames = decoder(demo_data.demo_frames(data))
    dets, orig43 = frames[0], frames[3].to_original((480, 640))
    images, annotations = [], []
    for image_id, d in ((42, dets.to_original((480, 640))), (43, orig43)):
        images.append({"id": image_id, "width": 640, "height": 480, "file_name": f"{image_id}.jpg"})
        for box, c in zip(d.boxes_as("xyxy_pixels"), d.class_ids):
            x1, y1, x2, y2 = (float(v) for v in box)
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": int(c) + 1,
                                "bbox": [x1, y1, x2 - x1, y2 - y1], "area": (x2 - x1) * (y2 - y1), "iscrowd": 0})
    gt = {"images": images, "annotations": annotations,
          "categories": [{"id": 1, "name": "person"}, {"id": 2, "name": "bicycle"}]}
    (ctx.tmp / "instances_val2017.json").write_text(json.dumps(gt))
    return {"dets": dets, "orig43": orig43, "names": [str(n) for n in data["class_names"]],
            "photo": np.full((480, 640, 3), 128, np.uint8)}


@setup
def setup_interop_pose(ctx: Ctx) -> Dict[str, Any]:
    """`pose_dets`: the bundled yolo11n-pose frame, decoded."""
    data = demo_data.load_task_demo("pose")
    decoder = hd.Decoder(demo_data.task_demo_config(data, "pose"))
    return {"pose_dets": decoder(demo_data.task_demo_frames(data, "pose"))[0]}


@setup
def setup_eval_recording(ctx: Ctx) -> Dict[str, Any]:
    """`ids` (COCO image ids) and `outputs` ({output name: list of frames}) of two recorded frames."""
    data = _fall_data()
    outputs = {f"yolov8n/{conv}": [data[key][0], data[key][1]] for key, conv in YOLOV8N_LAYERS}
    return {"ids": [42, 43], "outputs": outputs}


# -- the tests -------------------------------------------------------------------------------------

def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p)]


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=_page_id)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    """Every ```python block of the page runs without raising (skips only with a reason)."""
    monkeypatch.chdir(tmp_path)
    ctx = Ctx(tmp_path, monkeypatch)
    namespace: Dict[str, Any] = {"__name__": f"docs:{_page_id(page)}"}
    ran = 0
    try:
        for block in python_blocks(page):
            if block.skip_reason is not None:
                continue
            for name in block.setups:
                namespace.update(ctx.need(name))
            # Padded so that a traceback's line numbers are the Markdown file's.
            code = compile("\n" * (block.line - 1) + block.code, str(block.page), "exec")
            try:
                exec(code, namespace)
            except Exception:
                pytest.fail(f"the block at {block.where} raised:\n{traceback.format_exc()}", pytrace=False)
            ran += 1
    finally:
        for cleanup in reversed(ctx.cleanups):
            cleanup()
    assert ran, f"{_page_id(page)}: every python block is skipped"


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_directives_are_well_formed(page):
    """Each docs-test comment sits right before a python block, names known setups, and a skip
    gives its reason."""
    for line, text in _directives(page):
        blocks = [b for b in blocks_of(page) if b.directive == text and b.line > line]
        assert blocks and blocks[0].line - line <= 3 and blocks[0].lang in ("python", "py"), \
            f"{_page_id(page)}:{line}: docs-test comment {text!r} is not right before a ```python block"
        block = blocks[0]
        if text.startswith("skip"):
            assert block.skip_reason, f"{block.where}: a skipped block needs a reason: skip (why)"
        elif text.startswith("setup"):
            unknown = [n for n in block.setups if n not in SETUPS]
            assert block.setups and not unknown, f"{block.where}: unknown setup(s) {unknown}; known: {sorted(SETUPS)}"
        else:
            pytest.fail(f"{_page_id(page)}:{line}: unknown docs-test comment {text!r} (setup NAME or skip (reason))")


def test_readme_keeps_the_fresh_machine_commands():
    """.ci/run runs the second command verbatim, and a new user types both as README shows them."""
    lines = [ln.strip() for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()]
    for command in FRESH_MACHINE_COMMANDS:
        assert command in lines, f"README.md must keep the line: {command}"
    assert "(`.ci/run` does exactly the second one in a fresh virtual environment.)" in lines


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _relative_links(page: Path) -> List[tuple]:
    """(line, target) of every relative Markdown link outside code blocks."""
    out, in_code = [], False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in _LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue  # http:, mailto:, in-page anchors
            out.append((n, target))
    return out


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_relative_links_point_at_files(page):
    missing = []
    for line, target in _relative_links(page):
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists() and path not in PENDING_PAGES:
            missing.append(f"{_page_id(page)}:{line}: {target}")
    assert not missing, "links to files that do not exist:\n" + "\n".join(missing)


def test_the_guide_index_links_every_page():
    """docs/index.md is the guide's table of contents: every page of docs/ is in it."""
    linked = {(ROOT / "docs" / t.split("#", 1)[0]).resolve() for _, t in _relative_links(ROOT / "docs" / "index.md")}
    pages = {p.resolve() for p in (ROOT / "docs").glob("*.md")} - {(ROOT / "docs" / "index.md").resolve()}
    assert not pages - linked, f"pages missing from docs/index.md: {sorted(p.name for p in pages - linked)}"


# -- the messages docs/troubleshooting.md quotes ---------------------------------------------------

def _message(fn: Callable[[], Any]) -> str:
    """What fn makes hailo-decode say: the exception it raises, the warnings it gives, or the text
    it returns (a diagnose report)."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            said = fn()
        except (ValueError, TypeError) as e:
            return str(e)
    return said if isinstance(said, str) else " ".join(str(w.message) for w in caught)


def _grid_outputs(channels: Dict[str, int], names=("b", "c")) -> List[hd.OutputInfo]:
    return [hd.OutputInfo(f"{n}{s}", (640 // s, 640 // s, channels[n]), zp=0.0, scale=1 / 255)
            for s in (8, 16, 32) for n in names]


def _pose_shapes() -> List[hd.OutputInfo]:
    return [hd.OutputInfo(f"{n}{s}", (640 // s, 640 // s, c), zp=0.0, scale=1 / 255) for s in (8, 16, 32)
            for n, c in (("box", 64), ("cls", 1), ("kpt", 51))]


def _decoder_80() -> hd.Decoder:
    return hd.Decoder(hd.DecoderConfig(_grid_outputs({"b": 64, "c": 80})))


def _frame_80(fill: int = 0) -> Dict[str, np.ndarray]:
    return {o.name: np.full(o.shape, fill, np.uint8) for o in _decoder_80().config.outputs}


def _diagnose(data, config) -> str:
    return " ".join(f"{e['name']} {w}" for e in hd.Decoder(config).diagnose(data) for w in e["warnings"])


def _fake_float32_bindings(monkeypatch) -> None:
    """make_bindings: a uint8 decoder over an InferModel whose outputs were set to FLOAT32."""
    ctx = Ctx(Path("."), monkeypatch)
    try:
        fd = _fake_hailo_platform(ctx)
        import hailo_platform as hp
        outputs = [fd.FakeOutput(o.name, o.shape, "uint8", o.order, zp=o.zp, scale=o.scale) for o in _yolov8n_80_outputs()]
        path = fd.register(fd.FakeModel("yolov8n", outputs, frames=_yolov8n_80_frames()))
        infer_model = hp.VDevice().create_infer_model(path)
        decoder = hd.Decoder(hd.DecoderConfig(_yolov8n_80_outputs()))
        for name in infer_model.output_names:
            infer_model.output(name).set_format_type(hp.FormatType.FLOAT32)
        with infer_model.configure() as configured:
            decoder.make_bindings(configured, infer_model=infer_model)
    finally:
        for cleanup in reversed(ctx.cleanups):
            cleanup()


def _fake_per_channel_network_group(monkeypatch) -> None:
    """from_hailo on a network group of a per-feature quantized model (no HEF file known)."""
    ctx = Ctx(Path("."), monkeypatch)
    try:
        fd = _fake_hailo_platform(ctx)
        import hailo_platform as hp
        outputs = [fd.FakeOutput(o.name, o.shape, "uint8", o.order, zp=[o.zp] * o.shape[2], scale=[o.scale] * o.shape[2])
                   for o in _yolov8n_80_outputs()]
        hef = hp.HEF(fd.register(fd.FakeModel("yolov8n", outputs, frames=_yolov8n_80_frames())))
        params = hp.ConfigureParams.create_from_hef(hef, interface=hp.HailoStreamInterface.PCIe)
        network_group = hp.VDevice().configure(hef, params)[0]
        hd.DecoderConfig.from_hailo(network_group)
    finally:
        for cleanup in reversed(ctx.cleanups):
            cleanup()


def test_troubleshooting_quotes_what_the_code_says(tmp_path, monkeypatch):
    """Each message docs/troubleshooting.md quotes is what hailo-decode prints today (a reworded
    message must be reworded in the page too)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.hef").write_bytes(hw.yolov8_hef(input_size=320, image_hw=(640.0, 640.0), per_feature=False))
    fall, pose = _fall_data(), demo_data.load_task_demo("pose")
    contiguous = _frame_80()
    contiguous["c8"] = np.asfortranarray(contiguous["c8"])
    as_float = _frame_80()
    as_float["c8"] = as_float["c8"].astype(np.float32)
    cases = {
        "NMS op 'yolov8_nms_postprocess' says image 640x640, but the input 'yolov8n/input_layer1' is 320x320. "
        "The grids agree with the input (stride 8 x grid 40x40 = 320x320, stride 16 x grid 20x20 = 320x320, "
        "stride 32 x grid 10x10 = 320x320): the op's size is the wrong one. HailoRT normalizes its boxes by "
        "640x640, so on this HEF its normalized boxes are scaled by 0.5 in x and 0.5 in y (every box lands in "
        "the top-left part of the image). hailo-decode normalizes by the input's 320x320, the size the strides x "
        "grids describe (stride x grid must equal the image size on every head), so its boxes are where the "
        "objects are and differ from the boxes of HailoRT's own op by that scale.":
            lambda: hd.DecoderConfig.from_hef("m.hef"),
        "fall/cls_32 class values range over [-32.37, 1.321], outside [0, 1]: they look like logits, not sigmoid "
        "scores; use class_activation='sigmoid'":
            lambda: _diagnose(demo_data.demo_frames(fall), demo_data.demo_config(fall, class_activation="none")),
        "pose/cls_32 class scores saturate: 1.75% of the values sit at the quantized maximum (255), i.e. score "
        "0.9416; those detections all tie at the same score and the true ranking is lost (recalibrate the model, "
        "or compile this output as 16-bit)":
            lambda: _diagnose(demo_data.task_demo_frames(pose, "pose"), demo_data.task_demo_config(pose, "pose")),
        "of the box values sit at the quantized maximum (255): the DFL logits clip, so box sides are less precise":
            lambda: _diagnose(_frame_80(255), _decoder_80().config),
        "cannot tell box from class output on grid (80, 80): 'b8' has 64 channels, 'c8' has 64; pass "
        "heads=[Head(box=..., cls=..., stride=..., kpt=... or angle=...), ...] or use DecoderConfig.from_nms_json "
        "(or bins=...)":
            lambda: hd.DecoderConfig(_grid_outputs({"b": 64, "c": 64})),
        "cannot pair outputs by shape: each grid needs two (box, class) or three (box, class, kpt or angle) outputs, "
        "got {(80, 80): ['a'], (40, 40): ['b']}; pass heads=[Head(box=..., cls=..., stride=..., kpt=... or "
        "angle=...), ...] or use DecoderConfig.from_nms_json":
            lambda: hd.DecoderConfig([hd.OutputInfo("a", (80, 80, 64), zp=0.0, scale=1.0),
                                      hd.OutputInfo("b", (40, 40, 80), zp=0.0, scale=1.0)]),
        "one tensor per grid looks like YOLOv5/YOLOv7 anchor heads (3 anchors x (5 + 80 classes) = 255 channels): "
        "their anchors are not in the tensors; use DecoderConfig.from_nms_json(...) (the Model Zoo JSON) or "
        "DecoderConfig.from_hef(...) (a HEF with its NMS op), or heads=[AnchorHead(output, anchors=((w, h), ...), "
        "stride=...), ...]":
            lambda: hd.DecoderConfig(_grid_outputs({"v": 255}, names=("v",))),
        "cannot pair outputs by shape, it is ambiguous: obb with 51 classes; pose with 1 class and 51 kpt channels "
        "all fit":
            lambda: hd.DecoderConfig(_pose_shapes()),
        "pass task='pose' or task='obb' (and keypoint_dims=2 for (x, y) keypoints), or pass heads=[":
            lambda: hd.DecoderConfig(_pose_shapes()),
        "belong to no head; remove them or add heads":
            lambda: hd.DecoderConfig(_grid_outputs({"b": 64, "c": 80}) + [hd.OutputInfo("extra", (80, 80, 8), zp=0.0, scale=1.0)],
                                     [hd.Head(f"b{s}", f"c{s}", s) for s in (8, 16, 32)]),
        "outputs do not match the config: missing [":
            lambda: _decoder_80()({k.upper(): v for k, v in _frame_80().items()}),
        "output 'c8': array is not C-contiguous (it is read in place; pass numpy.ascontiguousarray(...))":
            lambda: _decoder_80()(contiguous),
        "output 'c8': expected dtype uint8, got float32":
            lambda: _decoder_80()(as_float),
        "output 'x': host order must be one of ('NHWC', 'FCR', 'F8CR', 'NCHW'), got 'NHCW' (NHCW exists only as a "
        "raw device buffer: pass device=True with padded_shape)":
            lambda: hd.OutputInfo("x", (80, 80, 80), "uint8", "NHCW", zp=0.0, scale=1.0),
        "output 'x': scale must be > 0, got 0.0":
            lambda: hd.OutputInfo("x", (80, 80, 80), "uint8", "NHWC", zp=0.0, scale=0.0),
        "a flat HAILO_NMS_BY_CLASS buffer needs num_classes=":
            lambda: hd.decode_hailo_nms(np.zeros(100, np.float32)),
        "the model delivers float32 but the decoder expects uint8; build the config from this InferModel "
        "(config_from_hailo(infer_model))":
            lambda: _fake_float32_bindings(monkeypatch),
        "are quantized per channel (per-feature HEF), and HailoRT 4.23.0 reports a single quant_info for each, all "
        "zeros (INVALID_QUANT_INFO): the network group's vstream infos hold one entry, not one per channel. The "
        "per-channel values are only in the HEF file: pass hef_path= (this object does not know its HEF file) to "
        "read them with hailo_decode.hef; or request FLOAT32 outputs, which HailoRT dequantizes per channel itself":
            lambda: _fake_per_channel_network_group(monkeypatch),
    }
    page = " ".join((ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8").split())
    stale = []
    for quoted, make in cases.items():
        said = _message(make)
        if quoted not in " ".join(said.split()):
            stale.append(f"the code no longer says: {quoted!r}\n  it says: {said!r}")
        if quoted not in page:
            stale.append(f"docs/troubleshooting.md does not quote: {quoted!r}")
    assert not stale, "\n".join(stale)
