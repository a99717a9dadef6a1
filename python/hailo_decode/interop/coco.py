"""Detections -> COCO results JSON records, and a pycocotools evaluation of them against
COCO-format ground truth. pycocotools is imported only when needed (pip extra `coco`): by
`evaluate_coco`, and by `to_coco` for masks (run-length encoding)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from hailo_decode.interop import _common  # the sibling module, not the package (no package-level cycle)

__all__ = ["COCO80_TO_COCO91", "COCO_STATS", "to_coco", "evaluate_coco"]

# The 80 classes COCO-trained YOLO models predict, in order, -> the category ids of COCO's
# instances files (1..90 with 10 ids unused: 12, 26, 29, 30, 45, 66, 68, 69, 71, 83).
COCO80_TO_COCO91: Tuple[int, ...] = tuple(
    i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83))

# COCOeval.stats, in its order (bbox and segm; keypoints has 10 of them, no small).
COCO_STATS = ("AP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large",
              "AR1", "AR10", "AR100", "AR_small", "AR_medium", "AR_large")
_KEYPOINT_STATS = ("AP", "AP50", "AP75", "AP_medium", "AP_large", "AR", "AR50", "AR75", "AR_medium", "AR_large")

CategoryIds = Union[None, Sequence[int], Mapping[int, int]]


def _category_lookup(ids: np.ndarray, category_ids: CategoryIds) -> List[int]:
    if category_ids is None:
        return [int(i) for i in ids]
    out = []
    for i in ids:
        try:
            out.append(int(category_ids[int(i)]))
        except (IndexError, KeyError):
            size = len(category_ids)
            raise ValueError(f"class id {int(i)} has no COCO category in category_ids (it holds {size})") from None
    return out


def _rle(mask: np.ndarray) -> Dict[str, Any]:
    mask_utils = _common.optional_import("pycocotools.mask", "coco", "to_coco with masks")
    rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    rle["counts"] = rle["counts"].decode("ascii")  # bytes -> str, for JSON
    return rle


def _image_id(image_id: Any) -> Union[int, str]:
    if isinstance(image_id, (bool, np.bool_)) or not isinstance(image_id, (int, np.integer, str)):
        raise TypeError(f"image_id must be an int (or a str), got {type(image_id).__name__}")
    return image_id if isinstance(image_id, str) else int(image_id)


def to_coco(dets: Any, image_id: Union[int, str], category_ids: CategoryIds = None) -> List[Dict[str, Any]]:
    """COCO results records for one image: {"image_id", "category_id", "bbox": [x, y, w, h],
    "score"}, plus "keypoints" [x1, y1, v1, ...] and "segmentation" (RLE) when the detections
    have keypoints or masks. Coordinates are pixels of the detections' image.

    COCO ground truth is in the ORIGINAL image: for a letterboxed network input, pass
    `dets.to_original((orig_h, orig_w))`, not the detections in network-input pixels.
    category_ids maps class_id -> category_id (a sequence indexed by class id, or a dict); None
    keeps the class id. A COCO-trained 80-class model needs `category_ids=COCO80_TO_COCO91`."""
    image_id = _image_id(image_id)
    xyxy = _common.xyxy_pixels(dets).astype(np.float64)
    scores = _common.scores(dets)
    cats = _category_lookup(_common.class_ids(dets), category_ids)
    kpts = _common.keypoints_pixels(dets)
    masks = _common.masks(dets)
    records = []
    for i in range(len(scores)):
        x1, y1, x2, y2 = xyxy[i]
        rec: Dict[str, Any] = {
            "image_id": image_id,
            "category_id": cats[i],
            "bbox": [round(x1, 3), round(y1, 3), round(x2 - x1, 3), round(y2 - y1, 3)],
            "score": round(float(scores[i]), 5),
        }
        if kpts is not None:
            rec["keypoints"] = [round(float(v), 3) for v in kpts[i].reshape(-1)]
        if masks is not None:
            rec["segmentation"] = _rle(masks[i])
        records.append(rec)
    return records


def _load_ground_truth(ground_truth: Any) -> Any:
    coco_mod = _common.optional_import("pycocotools.coco", "coco", "evaluate_coco")
    if isinstance(ground_truth, coco_mod.COCO):
        return ground_truth
    if isinstance(ground_truth, (str, os.PathLike)):
        with open(ground_truth, encoding="utf-8") as f:
            dataset = json.load(f)
    elif isinstance(ground_truth, Mapping):
        dataset = copy.deepcopy(dict(ground_truth))
    else:
        raise TypeError(f"ground_truth must be a COCO JSON path, a dict or a pycocotools COCO, "
                        f"got {type(ground_truth).__name__}")
    for key in ("images", "annotations", "categories"):
        if key not in dataset:
            raise ValueError(f"COCO ground truth has no {key!r} list")
    gt = coco_mod.COCO()
    gt.dataset = dataset
    with contextlib.redirect_stdout(io.StringIO()):
        gt.createIndex()
    return gt


def _pairs(detections: Any) -> List[Tuple[Any, Any]]:
    if isinstance(detections, Mapping):
        return list(detections.items())
    pairs = list(detections)
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2):
            raise TypeError(f"detections must be a mapping or (image_id, detections) pairs, got an item "
                            f"{type(p).__name__}")
    return pairs


def evaluate_coco(detections: Union[Mapping[Any, Any], Iterable[Tuple[Any, Any]]], ground_truth: Any, *,
                  category_ids: CategoryIds = None, iou_type: str = "bbox",
                  image_ids: Optional[Sequence[Any]] = None, verbose: bool = False) -> Dict[str, float]:
    """Score detections against COCO-format ground truth with pycocotools' COCOeval.

    detections: {image_id: Detections-like} or (image_id, Detections-like) pairs, each in the
    ORIGINAL image's pixels (see to_coco). Only these images are scored (an image given with no
    detection counts, its objects as missed), unless image_ids says otherwise.
    ground_truth: a COCO JSON path, the loaded dict, or a pycocotools COCO.
    iou_type: "bbox", "segm" (needs masks) or "keypoints" (needs keypoints).
    Returns COCOeval's stats by name (COCO_STATS; AP is mAP@[.5:.95]); verbose prints its table."""
    if iou_type not in ("bbox", "segm", "keypoints"):
        raise ValueError(f"iou_type must be 'bbox', 'segm' or 'keypoints', got {iou_type!r}")
    cocoeval = _common.optional_import("pycocotools.cocoeval", "coco", "evaluate_coco")
    gt = _load_ground_truth(ground_truth)
    pairs = _pairs(detections)
    records: List[Dict[str, Any]] = []
    for image_id, dets in pairs:
        records += to_coco(dets, image_id, category_ids)
    scored = [_image_id(i) for i in (image_ids if image_ids is not None else [i for i, _ in pairs])]
    known_images = set(gt.getImgIds())
    unknown = [i for i in scored if i not in known_images]
    if unknown:
        raise ValueError(f"image ids {unknown[:10]} are not in the ground truth")
    known_cats = set(gt.getCatIds())
    stray = sorted({r["category_id"] for r in records} - known_cats)
    if stray:
        raise ValueError(f"category ids {stray[:10]} are not in the ground truth (its categories: "
                         f"{sorted(known_cats)[:10]}...): map class ids with category_ids= "
                         f"(COCO80_TO_COCO91 for a COCO-trained model)")
    if iou_type == "segm" and records and "segmentation" not in records[0]:
        raise ValueError("iou_type='segm' needs detections with masks")
    if iou_type == "keypoints" and records and "keypoints" not in records[0]:
        raise ValueError("iou_type='keypoints' needs detections with keypoints")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if records:
            dt = gt.loadRes(copy.deepcopy(records))  # loadRes writes ids and areas into the records
        else:  # loadRes cannot take an empty list; no detection is a valid (all-missed) result
            dt = type(gt)()
            dt.dataset = {"images": list(gt.dataset["images"]), "categories": copy.deepcopy(gt.dataset["categories"]),
                          "annotations": []}
            dt.createIndex()
        ev = cocoeval.COCOeval(gt, dt, iou_type)
        ev.params.imgIds = scored
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    if verbose:
        print(out.getvalue(), end="")
    names = _KEYPOINT_STATS if iou_type == "keypoints" else COCO_STATS
    return {name: float(v) for name, v in zip(names, ev.stats)}
