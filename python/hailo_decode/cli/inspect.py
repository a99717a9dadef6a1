"""`hailo-decode inspect model.hef`: what `hailortcli parse-hef` prints (network group, inputs and
outputs with host order and shape, device order and padded shape), plus each output's
quantization, the YOLOv8 NMS op, and the decoder configuration hailo-decode would use (or why
none can be built). `--json` prints the same as JSON; `--frames dump.npz` also checks recorded
raw outputs for saturation (hailo_decode.diagnostics)."""

from __future__ import annotations

import argparse
import json
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..config import DecoderConfig, end2end_choice, task_decode_choice
from ..decoder import Decoder
from .errors import UserError, load_hef, load_npz
from ..hef import (HefInfo, HefLayer, HefMismatchWarning, HefNetworkGroup, bbox_only_proposals,
                   config_from_hef, hef_mismatches, infer_class_activation)

__all__ = ["add_parser", "config_to_dict", "inspect_report", "format_report", "run_inspect"]

DESCRIPTION = """\
Show what a compiled model (.hef) holds, as `hailortcli parse-hef` does (network groups, inputs,
outputs with their order and shape on the host and on the device), plus each output's
quantization (zero point and scale), the YOLO NMS op HailoRT would run, and the decoder
configuration hailo-decode builds from the file (or why it cannot). No HailoRT or device needed.

With --frames: also check raw outputs recorded from the device for saturation (values stuck at the
quantized minimum or maximum) and for logits where scores were expected."""

_TYPE = {"uint8": "UINT8", "uint16": "UINT16", "float32": "FLOAT32"}
_QMAX = {"uint8": 255, "uint16": 65535}


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Registers `inspect` on the `hailo-decode` command's subparsers (runs via args.run(args))."""
    p = subparsers.add_parser(
        "inspect", help="show what a .hef file holds and how hailo-decode would decode it",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("hef", help="the compiled model, a .hef file")
    p.add_argument("--json", action="store_true", help="print the same as JSON, for scripts")
    p.add_argument("--network-group", default=None, metavar="NAME",
                   help="which network group to show, for a HEF with several (default: all; with --frames: "
                        "needed when there are several)")
    p.add_argument("--device-buffers", action="store_true",
                   help="describe the outputs as raw device buffers (device order, padded shape; C++ raw "
                        "streams) instead of what vstreams and InferModel hand out")
    p.add_argument("--semantics", choices=("hailort", "ultralytics"), default="hailort",
                   help="whose post-processing the configuration matches: hailort (HailoRT's NMS op; default) "
                        "or ultralytics (Ultralytics' predict)")
    p.add_argument("--task", choices=("detect", "pose", "obb"), default=None,
                   help="what the model does, when its output shapes leave it open (three outputs per grid: "
                        "box, class and keypoints or angle); default: what the shapes say")
    p.add_argument("--frames", metavar="NPZ", default=None,
                   help="raw outputs recorded from the device, an .npz of arrays keyed by output name "
                        "(numpy.savez); reports saturation per output")
    p.set_defaults(run=run_inspect)
    return p


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------
def _q(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def config_to_dict(cfg: DecoderConfig) -> Dict[str, Any]:
    return dict(
        semantics=cfg.semantics, task=cfg.task, head_kind=cfg.head_kind, num_keypoints=cfg.num_keypoints,
        keypoint_dims=cfg.keypoint_dims, num_classes=cfg.num_classes, bins=cfg.bins, image_size=list(cfg.image_size),
        proto=cfg.proto,
        heads=[dict(box=h.box, cls=h.cls, stride=h.stride, **{k: getattr(h, k) for k in ("mask", "kpt", "angle")
                                                            if getattr(h, k)}) for h in cfg.heads],
        outputs=[dict(name=o.name, shape=list(o.shape), dtype=o.dtype, order=o.order, zp=_q(o.zp), scale=_q(o.scale),
                      padded_shape=list(o.memory_shape), device=o.device) for o in cfg.outputs],
        class_activation=cfg.class_activation, score_threshold=_q(cfg.score_threshold), score_test=cfg.score_test,
        iou_threshold=cfg.iou_threshold, iou_test=cfg.iou_test, multi_label=cfg.multi_label, agnostic=cfg.agnostic,
        max_per_class=cfg.max_per_class, max_total=cfg.max_total, max_candidates=cfg.max_candidates,
        tie_break=cfg.tie_break, hailort_version=cfg.hailort_version, box_format=cfg.box_format, end2end=cfg.end2end,
        keypoint_decode=cfg.keypoint_decode, angle_decode=cfg.angle_decode,
        selection=_selection_note(cfg), task_decode=_task_decode_note(cfg),
    )


def _task_decode_note(cfg: DecoderConfig) -> Optional[str]:
    """Pose and OBB: which keypoint or angle decode the configuration runs and why; None otherwise."""
    if cfg.task not in ("pose", "obb"):
        return None
    kpt, angle, reason = task_decode_choice(cfg)
    what, chosen, suggested = (("keypoint_decode", cfg.keypoint_decode, kpt) if cfg.task == "pose"
                               else ("angle_decode", cfg.angle_decode, angle))
    if chosen == suggested:
        return f"{what} {chosen!r}: {reason}"
    return f"{what} {chosen!r}, as set (the shapes alone suggest {suggested!r}: {reason})"


def _selection_note(cfg: DecoderConfig) -> str:
    """Which selection the configuration runs and why (end-to-end top-k or NMS)."""
    suggested, reason = end2end_choice(cfg)
    chosen = "end-to-end top-k (no NMS)" if cfg.end2end else "NMS"
    if cfg.end2end == suggested:
        return f"{chosen}: {reason}"
    return f"{chosen}, as set (the shapes alone suggest otherwise: {reason})"


def _shape_str(shape: Tuple[int, ...]) -> str:
    return "x".join(str(v) for v in shape)


def _layer_dict(layer: HefLayer) -> Dict[str, Any]:
    return dict(name=layer.name, host_order=layer.host_order, shape=list(layer.shape),
                vstream_shape=list(layer.vstream_shape), device_order=layer.device_order, format_code=layer.format_code,
                padded_shape=list(layer.padded_shape), hw_shape=list(layer.hw_shape), dtype=layer.dtype,
                bytes_per_element=layer.bytes_per_element, qp_zp=layer.qp_zp, qp_scale=layer.qp_scale,
                limvals=[layer.limvals_min, layer.limvals_max], per_feature=layer.per_feature,
                qp_zps=_q(layer.qp_zps), qp_scales=_q(layer.qp_scales), pad_index=layer.pad_index,
                original_names=list(layer.original_names), mux=layer.mux, transposed=layer.transposed)


def _nms_frame_bytes(classes: int, max_per_class: int) -> int:
    return classes * (1 + 5 * max_per_class) * 4


def _config_quietly(info: HefInfo, name: str, device_buffers: bool, semantics: str,
                    task: Optional[str] = None) -> DecoderConfig:
    """config_from_hef without its HefMismatchWarning: the report prints those itself."""
    kw = {} if task is None else {"task": task}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HefMismatchWarning)
        return config_from_hef(info, name, device_buffers=device_buffers, semantics=semantics, **kw)


def _decoder_for(info: HefInfo, ng: HefNetworkGroup, device_buffers: bool,
                 semantics: str, task: Optional[str] = None) -> Tuple[Optional[DecoderConfig], Optional[str]]:
    try:
        return _config_quietly(info, ng.name, device_buffers, semantics, task), None
    except ValueError as e:
        return None, str(e)


def _anchor_op_dict(ng: HefNetworkGroup) -> Optional[Dict[str, Any]]:
    """The network group's YOLOv5 / YOLOX NMS op, JSON-ready (None without one)."""
    op = ng.anchor_op
    if op is None:
        return None
    return dict(name=op.name, type=op.kind.upper(), score_threshold=op.score_threshold, iou_threshold=op.iou_threshold,
                classes=op.classes, max_proposals_per_class=op.max_proposals_per_class, image_height=op.image_height,
                image_width=op.image_width, output_name=op.output_name,
                bbox_decoders=[dict(stride=d.stride, layer=d.layer, anchors=[list(a) for a in d.anchors],
                                    obj_layer=d.obj_layer, cls_layer=d.cls_layer) for d in op.decoders])


def inspect_report(info: HefInfo, network_group: Optional[str] = None, *, device_buffers: bool = False,
                   semantics: str = "hailort", task: Optional[str] = None) -> Dict[str, Any]:
    """Everything `inspect` shows, as JSON-ready data."""
    groups = info.network_groups if network_group is None else (info.network_group(network_group),)
    h = info.header
    out: Dict[str, Any] = dict(
        file=info.path, header=dict(version=h.version, header_size=h.header_size, proto_size=h.proto_size,
                                    file_size=h.file_size, ccws_size=h.ccws_size, checksum_kind=h.checksum_kind,
                                    checksum=h.checksum, checksum_ok=h.checksum_ok),
        hw_arch=info.hw_arch_name, sdk_version=info.sdk_version, extensions=list(info.extension_names),
        network_groups=[])
    for ng in groups:
        cfg, reason = _decoder_for(info, ng, device_buffers, semantics, task)
        nms = None
        if ng.nms is not None:
            n = ng.nms
            nms = dict(name=n.name, type="YOLOV8", output_form=n.output_form, score_threshold=n.score_threshold,
                       iou_threshold=n.iou_threshold,
                       classes=n.classes, max_proposals_per_class=n.max_proposals_per_class,
                       image_height=n.image_height, image_width=n.image_width, regression_length=n.regression_length,
                       background_removal=n.background_removal, output_name=n.output_name,
                       bbox_decoders=[dict(stride=d.stride, reg_pad_index=d.reg_pad_index,
                                           cls_pad_index=d.cls_pad_index, reg_layer=d.reg_layer, cls_layer=d.cls_layer)
                                      for d in n.bbox_decoders])
            if n.bbox_decoding_only:
                try:
                    nms["proposals"] = bbox_only_proposals(ng)
                except ValueError:
                    nms["proposals"] = None
        activation_note = None
        if cfg is not None:
            act, activation_note = infer_class_activation([ng.output(hd_.cls) for hd_ in cfg.heads])
            if act == "sigmoid" and ng.nms is not None:
                activation_note += " (HailoRT's own NMS op would not: it would threshold the logits)"
        out["network_groups"].append(dict(
            name=ng.name, networks=list(ng.networks), contexts=ng.contexts, partial_layout=ng.partial_layout,
            inputs=[_layer_dict(x) for x in ng.inputs], outputs=[_layer_dict(x) for x in ng.outputs],
            post_process_ops=[dict(name=o.name, kind=o.kind, output_name=o.output_name) for o in ng.ops],
            nms=nms, anchor_op=_anchor_op_dict(ng), decoder=config_to_dict(cfg) if cfg is not None else None,
            decoder_error=reason, class_activation_note=activation_note, mismatches=hef_mismatches(ng, semantics)))
    return out


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _quant_line(d: Dict[str, Any]) -> str:
    if d["per_feature"]:
        zps, scales = d["qp_zps"] or [d["qp_zp"]], d["qp_scales"] or [d["qp_scale"]]
        return (f"per feature ({len(scales)}): zp {_fmt(min(zps))}..{_fmt(max(zps))}, "
                f"scale {_fmt(min(scales))}..{_fmt(max(scales))}")
    zp, scale = d["qp_zp"], d["qp_scale"]
    line = f"zp {_fmt(zp)}, scale {_fmt(scale)}"
    qmax = _QMAX.get(d["dtype"] or "")
    if qmax and scale:
        line += f"  -> [{_fmt((0 - zp) * scale)}, {_fmt((qmax - zp) * scale)}]"
    return line


def format_report(rep: Dict[str, Any], diagnosis: Optional[List[Dict[str, Any]]] = None) -> str:
    """The text `inspect` prints: hailortcli parse-hef's layout, then quantization, NMS, decoder."""
    lines: List[str] = []
    h = rep["header"]
    ok = {True: "verified", False: "MISMATCH", None: "not verified"}[h["checksum_ok"]]
    lines.append(f"HEF: {rep['file'] or '<bytes>'}  (header v{h['version']}, {h['header_size']} bytes; proto "
                 f"{h['proto_size']} bytes; {h['checksum_kind']} {ok})")
    lines.append(f"Architecture HEF was compiled for: {rep['hw_arch']}")
    if rep["sdk_version"]:
        lines.append(f"SDK version: {rep['sdk_version']}")
    for ng in rep["network_groups"]:
        ctx = "Single Context" if ng["contexts"] <= 1 else f"Multi Context - Number of contexts: {ng['contexts']}"
        lines.append(f"Network group name: {ng['name']}, {ctx}")
        for net in ng["networks"]:
            lines.append(f"    Network name: {net}")
        lines.append("        VStream infos:")
        for x in ng["inputs"]:
            lines.append(f"            Input  {x['name']} {_TYPE.get(x['dtype'], x['dtype'])}, "
                         f"{x['host_order']}({_shape_str(x['vstream_shape'])})")
        nms = ng["nms"]
        hidden = set()
        if nms is not None:
            hidden = {n for d in nms["bbox_decoders"] for n in (d["reg_layer"], d["cls_layer"]) if n}
            mpc = nms["max_proposals_per_class"]
            out_name = nms['output_name'] or nms['name']
            if nms["output_form"] == "bbox_only":
                rows = nms.get("proposals")
                lines.append(f"            Output {out_name} FLOAT32, NHWC(1x{rows if rows is not None else '?'}x"
                             f"{4 + nms['classes']})  [bbox only: boxes and scores per proposal, no NMS]")
            else:
                lines.append(f"            Output {out_name} FLOAT32, HAILO NMS BY CLASS(number of "
                             f"classes: {nms['classes']}, maximum bounding boxes per class: {mpc}, maximum frame size: "
                             f"{_nms_frame_bytes(nms['classes'], mpc)})  [or HAILO NMS BY SCORE, UINT8, "
                             f"{2 + 22 * nms['classes'] * mpc} bytes, when asked for]")
        for x in ng["outputs"]:
            if x["name"] not in hidden:
                lines.append(f"            Output {x['name']} {_TYPE.get(x['dtype'], x['dtype'])}, "
                             f"{x['host_order']}({_shape_str(x['vstream_shape'])})")
        if nms is not None:
            lines.append("            Operation:")
            lines.append("                Op YOLOV8" + (" (bbox decoding only: no NMS on the host)"
                                                       if nms["output_form"] == "bbox_only" else ""))
            lines.append(f"                Name: {nms['name']}")
            lines.append(f"                Score threshold: {nms['score_threshold']:.3f}")
            lines.append(f"                IoU threshold: {nms['iou_threshold']:.2f}")
            lines.append(f"                Classes: {nms['classes']}")
            lines.append(f"                Max bboxes per class: {nms['max_proposals_per_class']}")
            lines.append(f"                Image height: {nms['image_height']:g}")
            lines.append(f"                Image width: {nms['image_width']:g}")
            for d in nms["bbox_decoders"]:
                lines.append(f"                Bbox decoder: stride {d['stride']}, reg {d['reg_layer']} "
                             f"(pad {d['reg_pad_index']}), cls {d['cls_layer']} (pad {d['cls_pad_index']})")
        aop = ng.get("anchor_op")
        if aop is not None:
            lines.append("            Operation:")
            lines.append(f"                Op {aop['type']}")
            lines.append(f"                Name: {aop['name']}")
            lines.append(f"                Score threshold: {aop['score_threshold']:.3f}")
            lines.append(f"                IoU threshold: {aop['iou_threshold']:.2f}")
            lines.append(f"                Classes: {aop['classes']}")
            lines.append(f"                Max bboxes per class: {aop['max_proposals_per_class']}")
            for d in aop["bbox_decoders"]:
                what = (f"anchors {d['anchors']}" if aop["type"] == "YOLOV5"
                        else f"cls {d['cls_layer']}, anchors (w, h) {[[round(v, 4) for v in a] for a in d['anchors']]}"
                        if aop["type"] == "SSD" else f"obj {d['obj_layer']}, cls {d['cls_layer']}")
                lines.append(f"                Bbox decoder: stride {d['stride']}, {d['layer']}, {what}")
        for m in ng.get("mismatches", ()):
            lines.append(f"            warning: {m}")
        for op in ng["post_process_ops"]:
            if (nms is None or op["name"] != nms["name"]) and (aop is None or op["name"] != aop["name"]):
                lines.append(f"            Operation: {op['kind']} {op['name']} (not decoded by hailo-decode)")
        lines.append("        Stream infos:")
        for kind, xs in (("Input ", ng["inputs"]), ("Output", ng["outputs"])):
            for x in xs:
                extra = "" if x["padded_shape"] == x["shape"] else f", padded {_shape_str(x['padded_shape'])}"
                if x["hw_shape"] != x["padded_shape"]:
                    extra += f", hw shape {_shape_str(x['hw_shape'])} (HailoRT strips the padding)"
                lines.append(f"            {kind} {x['name']} {_TYPE.get(x['dtype'], x['dtype'])}, "
                             f"{x['device_order']}({_shape_str(x['shape'])}){extra}  [format code {x['format_code']}]")
        lines.append("        Quantization (outputs):")
        width = max(len(x["name"]) for x in ng["outputs"])
        for x in ng["outputs"]:
            lines.append(f"            {x['name']:<{width}}  {_quant_line(x)}")
        lines.append("    Decoder configuration:")
        cfg = ng["decoder"]
        if cfg is None:
            lines.append(f"        none: {ng['decoder_error']}")
        else:
            src = ("the HEF's YOLOv8 NMS op" if nms is not None else f"the HEF's {aop['type']} NMS op"
                   if aop is not None else "output shapes (or Ultralytics' original layer names)")
            task = cfg.get("task", "detect")
            what = {"detect": "detection", "segment": "segmentation (instance masks)",
                    "obb": "oriented boxes (OBB: angle per cell" + (")" if cfg.get("end2end") else ", rotated NMS)"),
                    "pose": f"pose ({cfg.get('num_keypoints')} keypoints x {cfg.get('keypoint_dims')})"}.get(task, task)
            lines.append(f"        task: {what}")
            kind = f"{cfg['bins']} DFL bins" if cfg.get("head_kind", "dfl") == "dfl" else f"{cfg['head_kind']} heads"
            lines.append(f"        task {task}: {cfg['num_classes']} classes, {kind}, input "
                         f"{cfg['image_size'][1]}x{cfg['image_size'][0]} (w x h), heads from {src}:")
            for hd in cfg["heads"]:
                extra = f", mask coefficients {hd['mask']}" if hd.get("mask") else ""
                extra += "".join(f", {k} {hd[k]}" for k in ("kpt", "angle") if hd.get(k))
                stride = "  -" if hd["stride"] is None else f"{hd['stride']:>3}"  # (SSD heads have none)
                lines.append(f"            stride {stride}: box {hd['box']}, cls {hd['cls']}{extra}")
            if cfg.get("proto"):
                lines.append(f"            prototypes {cfg['proto']} (instance masks at the prototype grid and the input size)")
            for o in cfg["outputs"]:
                dev = f", device buffer padded {_shape_str(o['padded_shape'])}" if o["device"] else ""
                q = ", ".join(f"{len(v)} per-channel {k}" if isinstance(v, list) else f"{k} {_fmt(v)}"
                              for k, v in (("zp", o["zp"]), ("scale", o["scale"])))
                lines.append(f"            {o['name']}: {o['dtype']} {o['order']}({_shape_str(o['shape'])}){dev}, {q}")
            th = cfg["score_threshold"]
            lines.append(f"        semantics {cfg['semantics']}: activation {cfg['class_activation']}, score "
                         f"{cfg['score_test']} {th if isinstance(th, list) else _fmt(th)}, IoU {cfg['iou_test']} "
                         f"{_fmt(cfg['iou_threshold'])}, multi_label {cfg['multi_label']}, max_per_class "
                         f"{cfg['max_per_class']}, box_format {cfg['box_format']}")
            if ng.get("class_activation_note"):
                lines.append(f"        class activation: {ng['class_activation_note']}")
            if cfg.get("selection"):
                lines.append(f"        selection: {cfg['selection']}")
                if cfg.get("end2end") and task != "detect":
                    extra = {"pose": "keypoints", "obb": "angle (rotated box; no rotated NMS)",
                             "segment": "mask coefficients"}[task]
                    lines.append(f"        end to end: each selected row's {extra}, read after the top-k")
            if cfg.get("task_decode"):
                lines.append(f"        task decode: {cfg['task_decode']}")
    if diagnosis is not None:
        lines.append("Recorded frames:")
        for d in diagnosis:
            parts = [f"{d['name']} ({d['role']}, {d['frames']} frame(s))"]
            if d.get("share_at_min") is not None:
                parts.append(f"at 0: {d['share_at_min']:.2%}, at {d['qmax']}: {d['share_at_max']:.2%}")
            parts.append(f"values [{_fmt(d['dequantized_min'])}, {_fmt(d['dequantized_max'])}]")
            if "score_min" in d:
                parts.append(f"scores [{_fmt(d['score_min'])}, {_fmt(d['score_max'])}]")
            lines.append("    " + "; ".join(parts))
            for w in d.get("warnings", ()):
                lines.append(f"        warning: {w}")
    return "\n".join(lines)


def _load_frames(path: str, cfg: DecoderConfig) -> Dict[str, np.ndarray]:
    data = load_npz("--frames", path)
    raw: Dict[str, np.ndarray] = {}
    for o in cfg.outputs:
        if o.name in data:
            raw[o.name] = data[o.name]
            continue
        short = o.name.rsplit("/", 1)[-1]
        cands = [k for k in data if k.rsplit("/", 1)[-1] == short]
        if len(cands) != 1:
            raise UserError(f"--frames {path}: no array for output {o.name!r} (keys: {sorted(data)})")
        raw[o.name] = data[cands[0]]
    return {k: np.ascontiguousarray(v) for k, v in raw.items()}


def _group(info: HefInfo, name: Optional[str], frames: Optional[str]) -> Optional[str]:
    """The --network-group to report: the name given (it must exist), or None for all of them;
    --frames diagnoses one group, so a HEF with several needs the name."""
    names = [ng.name for ng in info.network_groups]
    if name is not None and name not in names:
        raise UserError(f"--network-group {name}: the HEF has no such network group; it has {names}")
    if name is None and frames is not None and len(names) > 1:
        raise UserError(f"--frames: the HEF has {len(names)} network groups {names}; say which recorded them with "
                        f"--network-group NAME")
    return name


def run_inspect(args: argparse.Namespace) -> int:
    info = load_hef("", args.hef)
    group = _group(info, args.network_group, args.frames)
    rep = inspect_report(info, group, device_buffers=args.device_buffers, semantics=args.semantics, task=args.task)
    diagnosis = None
    if args.frames is not None:
        ng = rep["network_groups"][0]
        if ng["decoder"] is None:
            raise UserError(f"--frames needs a decoder configuration, and the HEF gives none: {ng['decoder_error']}")
        cfg = _config_quietly(info, ng["name"], args.device_buffers, args.semantics, args.task)
        frames = _load_frames(args.frames, cfg)
        try:
            diagnosis = Decoder(cfg).diagnose(frames)
        except (ValueError, TypeError) as e:
            raise UserError(f"--frames {args.frames}: {e}") from None
    if args.json:
        if diagnosis is not None:
            rep["diagnosis"] = diagnosis
        print(json.dumps(rep, indent=2, default=_json_default))
    else:
        print(format_report(rep, diagnosis))
    return 0


def _json_default(x: Any) -> Any:
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)
