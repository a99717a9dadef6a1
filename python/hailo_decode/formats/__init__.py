"""HailoRT's NMS output forms as pure array functions (no Detections here), one module a form:

- `by_class`: HAILO_NMS_BY_CLASS, HailoRT's default float32 form (per class a count, then that many
  [ymin, xmin, ymax, xmax, score]), and what pyhailort makes of it (a list of (n, 5) arrays per
  class, or tf_nms_format [classes, 5, max_per_class]).
- `by_score`: HAILO_NMS_BY_SCORE, the uint8 form (a uint16 count, then packed 22-byte records
  {ymin, xmin, ymax, xmax, score: float32, class_id: uint16} in score order), and pyhailort's
  list of Detection objects.
- `bbox_only`: the yolov8_bbox_only op's float32 output (1, proposals, 4 + classes): boxes and
  per-class scores, no NMS.

Every reader checks its buffer against its own length before reading: a count that claims more
than the buffer holds is never followed past the end.
"""

from . import bbox_only, by_class, by_score

__all__ = ["bbox_only", "by_class", "by_score"]
