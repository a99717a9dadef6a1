"""Hand detections to the tools users feed them into: supervision, COCO (pycocotools) and
pictures (Pillow). Functions over any Detections-like object (boxes, scores, class_ids,
box_format, image_size; optional keypoints, masks, rboxes), each third-party package imported
only when its call runs, with the pip extra to install named when it is missing.

Layering: this package sits below `detections` and imports only `config` from the package."""

from .coco import COCO80_TO_COCO91, COCO_STATS, evaluate_coco, to_coco
from .pictures import class_colour, draw, save_png
from .supervision import to_supervision, to_supervision_keypoints

__all__ = [
    "COCO80_TO_COCO91",
    "COCO_STATS",
    "class_colour",
    "draw",
    "evaluate_coco",
    "save_png",
    "to_coco",
    "to_supervision",
    "to_supervision_keypoints",
]
