"""Heads from outputs: pairing by shape (and by task), strides from the grids, and the checks
that every output belongs to exactly one head of the right shape."""

from __future__ import annotations

from dataclasses import replace as _dc_replace
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, cast


from .heads import MAX_IMAGE_SIDE, AnchorHead, Head, YoloxHead
from .outputs import OutputInfo
# YOLOv8/YOLO11 detect from P3: the finest grid has stride 8 when nothing else says otherwise.
_DEFAULT_FINEST_STRIDE = 8


def _head_repr(h: Head) -> str:
    if isinstance(h, AnchorHead):
        return f"({h.box}, anchors {list(h.anchors)}, stride {h.stride})"
    if isinstance(h, YoloxHead):
        return f"(reg {h.box}, obj {h.obj}, cls {h.cls}, stride {h.stride})"
    return "(" + ", ".join(h.outputs()) + f", stride {h.stride})"


def _head_family(heads: Optional[Sequence[Head]]) -> str:
    """"dfl", "yolov5" or "yolox", from the kind of Head objects given (all of one kind)."""
    if heads is None:
        return "dfl"
    kinds = {"yolov5" if isinstance(h, AnchorHead) else "yolox" if isinstance(h, YoloxHead) else "dfl" for h in heads}
    if len(kinds) > 1:
        raise ValueError(f"heads mix head families {sorted(kinds)}; use Head (DFL), AnchorHead (YOLOv5/YOLOv7) or "
                         f"YoloxHead (YOLOX) for all of them")
    return kinds.pop() if kinds else "dfl"


def _anchor_family_layout(kind: str, heads: Tuple[Head, ...], by_name: Mapping[str, OutputInfo],
                          image_size: Optional[Tuple[int, int]]) -> Tuple[int, Tuple[int, int], Tuple[Head, ...]]:
    """(num_classes, image_size, heads with strides) of YOLOv5 or YOLOX heads, after checking
    every output belongs to exactly one head and the channel counts fit."""
    if not heads:
        raise ValueError("heads must not be empty")
    names = list(by_name)
    roles: List[Tuple[str, str]] = []
    for h in heads:
        roles += [("tensor", h.box)] if isinstance(h, AnchorHead) else \
            [("reg", h.box), ("obj", cast(YoloxHead, h).obj), ("cls", h.cls)]
    for role, n in roles:
        if n not in by_name:
            raise ValueError(f"head {role} output {n!r} is not among the outputs {names}")
    used = [n for _, n in roles]
    if len(set(used)) != len(used):
        raise ValueError(f"an output is used by more than one head: {used}")
    unused = [n for n in names if n not in used]
    if unused:
        raise ValueError(f"outputs {unused} belong to no head; remove them or add heads")
    classes = set()
    for h in heads:
        if isinstance(h, AnchorHead):
            o = by_name[h.box]
            per = o.channels // len(h.anchors)
            if o.channels % len(h.anchors) or per < 6:
                raise ValueError(f"output {o.name!r}: {o.channels} channels do not hold {len(h.anchors)} anchors x "
                                 f"(5 + classes)")
            classes.add(per - 5)
        else:
            yh = cast(YoloxHead, h)
            reg, obj, cls = by_name[yh.box], by_name[yh.obj], by_name[yh.cls]
            if reg.channels != 4:
                raise ValueError(f"output {reg.name!r}: YOLOX reg must have 4 channels, got {reg.channels}")
            if obj.channels != 1:
                raise ValueError(f"output {obj.name!r}: YOLOX objectness must have 1 channel, got {obj.channels}")
            for o in (obj, cls):
                if o.shape[:2] != reg.shape[:2]:
                    raise ValueError(f"output {o.name!r}: grid {o.shape[:2]} differs from reg {reg.name!r} {reg.shape[:2]}")
            classes.add(cls.channels)
    if len(classes) != 1:
        raise ValueError(f"all heads must share the class count; got {sorted(classes)}")
    plain = [Head(h.box, h.box, h.stride) for h in heads]  # strides resolve from the first tensor's grid
    size, resolved = _resolve_strides(plain, by_name, image_size)
    out: List[Head] = []
    for h, r in zip(heads, resolved):
        if isinstance(h, AnchorHead):
            out.append(AnchorHead(h.box, h.anchors, r.stride))
        else:
            out.append(YoloxHead(h.box, cast(YoloxHead, h).obj, h.cls, r.stride))
    return classes.pop(), size, tuple(out)


def _match_output(layer: str, outputs: Sequence[OutputInfo]) -> str:
    exact = [o.name for o in outputs if o.name == layer]
    if exact:
        return exact[0]
    suffix = [o.name for o in outputs if o.name.rsplit("/", 1)[-1] == layer]
    if len(suffix) == 1:
        return suffix[0]
    names = [o.name for o in outputs]
    if not suffix:
        raise ValueError(f"NMS JSON layer {layer!r} matches no output (by name or the part after '/'): {names}")
    raise ValueError(f"NMS JSON layer {layer!r} matches several outputs: {suffix}")


def _check_task_outputs(heads: Sequence[Head], by_name: Mapping[str, OutputInfo], task: Optional[str],
                        keypoint_dims: Optional[int]) -> Tuple[str, int, int]:
    """(task, num_keypoints, keypoint_dims) the heads describe; a ValueError naming the output for
    anything the core could not decode."""
    with_kpt = [h for h in heads if h.kpt is not None]
    with_angle = [h for h in heads if h.angle is not None]
    for role, having in (("kpt", with_kpt), ("angle", with_angle)):
        if having and len(having) != len(heads):
            lacking = [h.box for h in heads if h not in having]
            raise ValueError(f"every head needs a {role} output when one has it; heads with box outputs {lacking} "
                             f"have none")
    if with_kpt and with_angle:
        raise ValueError("a head has either a kpt (pose) or an angle (OBB) output, not both")
    with_mask = any(h.mask is not None for h in heads)
    found = "pose" if with_kpt else "obb" if with_angle else "segment" if with_mask else "detect"
    if task is not None and task != found:
        need = {"pose": "a kpt output", "obb": "an angle output", "segment": "a mask output (and proto=)",
                "detect": "no kpt, angle or mask output"}[task]
        raise ValueError(f"task={task!r} needs {need} on every head; the heads describe {found!r}")
    for h in heads:
        box = by_name[h.box]
        for role, name in (("kpt", h.kpt), ("angle", h.angle)):
            if name is None:
                continue
            o = by_name[name]
            if o.shape[:2] != box.shape[:2]:
                raise ValueError(f"{role} output {name!r}: grid {o.shape[:2]} differs from its head's box output "
                                 f"{h.box!r} grid {box.shape[:2]}")
    if found == "obb":
        for h in heads:
            o = by_name[h.angle]  # type: ignore[index]
            if o.channels != 1:
                raise ValueError(f"angle output {o.name!r}: expected 1 channel (the angle logit), got {o.channels}")
        return found, 0, 3
    if found != "pose":
        return found, 0, 3
    dims = 3 if keypoint_dims is None else int(keypoint_dims)
    channels = {by_name[h.kpt].channels for h in heads}  # type: ignore[index]
    if len(channels) != 1:
        raise ValueError(f"all kpt outputs must have the same channels, got "
                         f"{ {h.kpt: by_name[h.kpt].channels for h in heads} }")  # type: ignore[index]
    (c,) = channels
    if c % dims:
        hint = "; pass keypoint_dims=2 for (x, y) keypoints" if dims == 3 and c % 2 == 0 else ""
        raise ValueError(f"kpt output {heads[0].kpt!r}: {c} channels is not a multiple of {dims} "
                         f"({'x, y, visibility' if dims == 3 else 'x, y'} per keypoint){hint}")
    return found, c // dims, dims


_FAMILY_ADVICE = ("use DecoderConfig.from_nms_json(...) (the Model Zoo JSON) or DecoderConfig.from_hef(...) (a HEF with "
                  "its NMS op)")


def _anchor_reading(channels: int) -> Optional[Tuple[int, int]]:
    """(anchors, classes) of one YOLOv5/YOLOv7 tensor of `channels` = anchors x (5 + classes),
    three anchors (both repositories' default) first; None when no count from 1 to 5 fits."""
    for a in (3, 1, 2, 4, 5):
        if channels % a == 0 and channels // a >= 6:
            return a, channels // a - 5
    return None


def _yolox_classes(trio: Sequence[OutputInfo]) -> Optional[int]:
    """The class count of a grid holding YOLOX's reg (4), objectness (1) and class outputs, else None."""
    rest = sorted(o.channels for o in trio)
    if len(rest) != 3 or 4 not in rest or 1 not in rest:
        return None
    rest.remove(4)
    rest.remove(1)
    return rest[0]


def _family_hint(groups: Mapping[Tuple[int, int], Sequence[OutputInfo]], task: Optional[str]) -> Optional[str]:
    """What the outputs look like when they are not DFL heads the shapes alone configure: YOLOv5/
    YOLOv7 anchor heads (one tensor per grid; their anchors are not in the tensors) or YOLOX heads
    (reg 4, objectness 1, classes per grid), which a (4, 1, nc) triple shares with YOLO26's
    end-to-end OBB head (a 4-channel box, nc classes, a 1-channel angle). None when neither fits."""
    grids = list(groups.values())
    if all(len(g) == 1 for g in grids):
        channels = {g[0].channels for g in grids}
        reading = _anchor_reading(next(iter(channels))) if len(channels) == 1 else None
        if reading is None:
            return None
        a, nc = reading
        return (f"one tensor per grid looks like YOLOv5/YOLOv7 anchor heads ({a} anchor{'' if a == 1 else 's'} x "
                f"(5 + {nc} class{'' if nc == 1 else 'es'}) = {a * (5 + nc)} channels): their anchors are not in the "
                f"tensors; {_FAMILY_ADVICE}, or heads=[AnchorHead(output, anchors=((w, h), ...), stride=...), ...]")
    if task not in (None, "detect", "obb") or not all(len(g) == 3 for g in grids):
        return None
    classes = {_yolox_classes(g) for g in grids}
    if len(classes) != 1 or None in classes:
        return None
    nc = cast(int, classes.pop())
    hint = (f"4, 1 and {nc} channels per grid look like YOLOX heads (reg, objectness, {nc} class"
            f"{'' if nc == 1 else 'es'}): {_FAMILY_ADVICE}, or heads=[YoloxHead(reg, obj, cls, stride=...), ...]")
    if task == "detect":
        return hint
    # Only the 4-channel output can be the box then, and only the 1-channel one the angle, unless
    # the class count is 4 or 1 too.
    by_shape = "task='obb', bins=1 (or heads=[Head(box, cls, angle=...), ...])" if nc not in (1, 4) else \
        "heads=[Head(box, cls, angle=...), ...]"
    return (f"{hint}. Or YOLO26's end-to-end OBB head (a 4-channel box, {nc} class{'' if nc == 1 else 'es'}, a "
            f"1-channel angle): {by_shape} with end2end=True, angle_decode='raw'")


def _pair_by_shape(outputs: Sequence[OutputInfo], bins: Optional[int], task: Optional[str] = None,
                   keypoint_dims: Optional[int] = None) -> List[Head]:
    """Pairs outputs sharing a grid into heads: (box, cls) for detection, (box, cls, kpt) for pose,
    (box, cls, angle) for OBB, by channel count (box 4 x bins, angle 1, kpt a multiple of
    keypoint_dims, and the class count the same on every grid); refuses to guess when ambiguous."""
    groups: Dict[Tuple[int, int], List[OutputInfo]] = {}
    for o in outputs:
        groups.setdefault(o.shape[:2], []).append(o)
    advice = ("pass heads=[Head(box=..., cls=..., stride=..., kpt=... or angle=...), ...] or use "
              "DecoderConfig.from_nms_json")
    sizes = {len(g) for g in groups.values()}
    if len(sizes) != 1 or not sizes <= {2, 3} or (task == "detect" and sizes != {2}) \
            or (task in ("pose", "obb") and sizes != {3}):
        per = "two (box, class)" if task == "detect" else "three (box, class, kpt or angle)" \
            if task in ("pose", "obb") else "two (box, class) or three (box, class, kpt or angle)"
        bad = {g: [o.name for o in os_] for g, os_ in groups.items()}
        hint = _family_hint(groups, task)
        if hint is not None:
            names = {g: [f"{o.name} ({o.channels} ch)" for o in os_] for g, os_ in groups.items()}
            raise ValueError(f"cannot pair outputs by shape: {names}: {hint}")
        raise ValueError(f"cannot pair outputs by shape: each grid needs {per} outputs, got {bad}; {advice}")
    ordered = sorted(groups.items(), key=lambda kv: -kv[0][0] * kv[0][1])
    if sizes == {2}:
        heads = []
        for grid, (a, b) in ordered:
            box = _pick_box(a, b, bins)
            if box is None:
                raise ValueError(f"cannot tell box from class output on grid {grid}: {a.name!r} has {a.channels} "
                                 f"channels, {b.name!r} has {b.channels}; {advice}" + ("" if bins else " (or bins=...)"))
            heads.append(Head(box.name, (b if box is a else a).name))
        return heads
    # Three per grid: every reading (task, class channels, extra channels) that fits every grid.
    dims = 3 if keypoint_dims is None else keypoint_dims
    # Each grid's candidate heads per reading; a reading fits when every grid has one for it.
    readings: Optional[Dict[Tuple[str, int, int], List[List[Head]]]] = None
    for _grid, trio in ordered:
        found: Dict[Tuple[str, int, int], List[Head]] = {}
        for box in trio:
            if not (box.channels == 4 * bins if bins is not None else box.channels % 4 == 0):
                continue
            # A 64-channel box (16 bins) is preferred over another multiple of 4, as for detection.
            if bins is None and box.channels != 64 and any(o.channels == 64 for o in trio):
                continue
            a, b = (o for o in trio if o is not box)
            for cls, extra in ((a, b), (b, a)):
                if task in (None, "obb") and extra.channels == 1:
                    found.setdefault(("obb", cls.channels, 1), []).append(Head(box.name, cls.name, angle=extra.name))
                if task in (None, "pose") and extra.channels % dims == 0:
                    found.setdefault(("pose", cls.channels, extra.channels), []).append(
                        Head(box.name, cls.name, kpt=extra.name))
        readings = {key: ([] if readings is None else readings[key]) + [heads]
                    for key, heads in found.items() if readings is None or key in readings}
    assert readings is not None
    if len(readings) == 1:
        per_grid = next(iter(readings.values()))
        if all(len(options) == 1 for options in per_grid):
            return [options[0] for options in per_grid]
    names = {g: [f"{o.name} ({o.channels} ch)" for o in os_] for g, os_ in groups.items()}
    hint = _family_hint(groups, task)
    if hint is not None:
        raise ValueError(f"cannot pair outputs by shape: {names}: {hint}")
    if not readings:
        raise ValueError(f"cannot pair outputs by shape: no reading as box (4 x bins), class and kpt (a multiple of "
                         f"{dims}) or angle (1 channel) fits every grid: {names}; {advice}")
    options = "; ".join(f"{t} with {nc} class{'' if nc == 1 else 'es'}" + (f" and {k} kpt channels" if t == "pose" else "")
                        for (t, nc, k) in sorted(readings))
    if len(readings) == 1:
        options += " (with two outputs of one grid that could each be either)"
    raise ValueError(f"cannot pair outputs by shape, it is ambiguous: {options} all fit {names}; pass task='pose' or "
                     f"task='obb' (and keypoint_dims=2 for (x, y) keypoints), or {advice}")


def _pick_box(a: OutputInfo, b: OutputInfo, bins: Optional[int]) -> Optional[OutputInfo]:
    if a.channels == b.channels:
        return None
    if bins is not None:
        fits = [o for o in (a, b) if o.channels == 4 * bins]
        return fits[0] if len(fits) == 1 else None
    sixteen = [o for o in (a, b) if o.channels == 64]  # 16 bins, YOLOv8/YOLO11's reg_max
    if len(sixteen) == 1:
        return sixteen[0]
    by4 = [o for o in (a, b) if o.channels % 4 == 0]
    return by4[0] if len(by4) == 1 else None


def _resolve_strides(pairs: Sequence[Head], by_name: Mapping[str, OutputInfo],
                     image_size: Optional[Tuple[int, int]]) -> Tuple[Tuple[int, int], Tuple[Head, ...]]:
    grids = [by_name[h.box].shape[:2] for h in pairs]
    if image_size is None:
        known = [(g, h.stride) for g, h in zip(grids, pairs) if h.stride is not None]
        if known:
            (gh, gw), st = known[0]
            image_size = (gh * int(st), gw * int(st))
        else:
            gh, gw = max(grids, key=lambda g: g[0] * g[1])
            image_size = (gh * _DEFAULT_FINEST_STRIDE, gw * _DEFAULT_FINEST_STRIDE)
    try:
        ih, iw = (int(v) for v in image_size)
    except (TypeError, ValueError):
        raise ValueError(f"image_size must be (height, width), got {image_size!r}") from None
    if not (0 < ih <= MAX_IMAGE_SIDE and 0 < iw <= MAX_IMAGE_SIDE):
        raise ValueError(f"image_size must be positive and at most {MAX_IMAGE_SIDE} a side, got {image_size!r}")
    resolved = []
    for (gh, gw), h in zip(grids, pairs):
        if h.stride is not None:
            st = int(h.stride)
            if not 0 < st <= MAX_IMAGE_SIDE:
                raise ValueError(f"head ({h.box!r}, {h.cls!r}): stride must be positive and at most "
                                 f"{MAX_IMAGE_SIDE}, got {h.stride}")
        else:
            if ih % gh or iw % gw or ih // gh != iw // gw:
                raise ValueError(f"head ({h.box!r}, {h.cls!r}): grid {(gh, gw)} does not divide image_size {(ih, iw)} "
                                 f"into one stride; pass the stride")
            st = ih // gh
        resolved.append(_dc_replace(h, stride=st))
    return (ih, iw), tuple(resolved)


def _find_proto(outputs: Sequence[OutputInfo]) -> Optional[str]:
    """The prototype output of a -seg model, by shape: alone on the finest grid, twice as fine as
    the next (stride 4 against 8), while every other grid holds three outputs (box, class, mask
    coefficients). None when the outputs do not look like that (a detection model)."""
    groups: Dict[Tuple[int, int], List[OutputInfo]] = {}
    for o in outputs:
        groups.setdefault(o.shape[:2], []).append(o)
    if len(groups) < 2:
        return None
    ordered = sorted(groups, key=lambda g: -g[0] * g[1])
    finest, next_ = ordered[0], ordered[1]
    if len(groups[finest]) != 1 or finest != (2 * next_[0], 2 * next_[1]):
        return None
    if not all(len(groups[g]) == 3 for g in ordered[1:]):
        return None
    return groups[finest][0].name


def _pair_seg_by_shape(outputs: Sequence[OutputInfo], proto: OutputInfo, bins: Optional[int]) -> List[Head]:
    """(box, cls, mask) heads of a -seg model by shape: per grid the output with the prototype's
    channel count holds the coefficients, the other two pair as for detection."""
    groups: Dict[Tuple[int, int], List[OutputInfo]] = {}
    for o in outputs:
        groups.setdefault(o.shape[:2], []).append(o)
    advice = "pass heads=[Head(box=..., cls=..., stride=..., mask=...), ...]"
    bad = {g: [o.name for o in os_] for g, os_ in groups.items() if len(os_) != 3}
    if bad:
        raise ValueError(f"cannot pair segmentation outputs by shape: each grid needs a box, a class and a mask "
                         f"coefficient output, got {bad}; {advice}")
    heads = []
    for grid, trio in sorted(groups.items(), key=lambda kv: -kv[0][0] * kv[0][1]):
        masks = [o for o in trio if o.channels == proto.channels]
        if len(masks) != 1:
            raise ValueError(f"cannot tell the mask coefficient output on grid {grid}: "
                             f"{[(o.name, o.channels) for o in trio]} against prototype {proto.name!r} with "
                             f"{proto.channels} channels; {advice}")
        a, b = [o for o in trio if o is not masks[0]]
        box = _pick_box(a, b, bins)
        if box is None:
            raise ValueError(f"cannot tell box from class output on grid {grid}: {a.name!r} has {a.channels} channels, "
                             f"{b.name!r} has {b.channels}; {advice}")
        heads.append(Head(box.name, (b if box is a else a).name, None, masks[0].name))
    return heads


def _check_seg(proto: OutputInfo, masks: Sequence[OutputInfo], heads: Sequence[Head],
               by_name: Mapping[str, OutputInfo], image_size: Tuple[int, int], proto_stride: Optional[int]) -> None:
    for h in heads:
        m, b = by_name[h.mask], by_name[h.box]  # type: ignore[index]
        if m.channels != proto.channels:
            raise ValueError(f"output {m.name!r}: {m.channels} mask coefficients, but the prototype output "
                             f"{proto.name!r} has {proto.channels} channels (they must be equal)")
        if m.shape[:2] != b.shape[:2]:
            raise ValueError(f"output {m.name!r}: mask coefficient grid {m.shape[:2]} differs from its head's box "
                             f"grid {b.shape[:2]} ({b.name!r})")
    if proto_stride is not None:
        st = int(proto_stride)
        want = (image_size[0] // st, image_size[1] // st)
        if image_size[0] % st or image_size[1] % st or proto.shape[:2] != want:
            raise ValueError(f"output {proto.name!r}: prototype grid {proto.shape[:2]} is not image_size / {st} = "
                             f"{want} (image_size {image_size}); pass proto_stride=None to allow it")
