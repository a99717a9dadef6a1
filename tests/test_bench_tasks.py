"""The pose/OBB benchmark module (hailo_decode.bench_tasks): its NumPy baselines find what the
decoder finds (so the speed comparison compares the same work), and a quick run produces rows."""

from __future__ import annotations

import numpy as np

import hailo_decode as hd
from hailo_decode import bench_tasks as bt


def test_numpy_baselines_agree_with_the_decoder():
    for make, numpy_fn in ((bt.pose_workload, bt.numpy_pose_filtered), (bt.obb_workload, bt.numpy_obb_filtered)):
        _, cfg, frames = make()
        for th in (0.25, 0.05):
            c = cfg.replace(score_threshold=th)
            d = hd.Decoder(c)(frames)
            ref = numpy_fn(c, frames, th)
            assert len(d) > 0 and abs(len(ref) - len(d)) <= max(1, len(d) // 50), (len(ref), len(d))
            if c.task == "pose":
                np.testing.assert_allclose(np.sort(ref[..., 0].ravel()), np.sort(d.keypoints[..., 0].ravel()), atol=1e-2)


def test_detection_only_drops_the_task_outputs():
    _, cfg, frames = bt.obb_workload()
    det, det_frames = bt.detection_only(cfg, frames)
    assert det.task == "detect" and len(det.outputs) == 6 and set(det_frames) == set(det.output_names)


def test_rotated_nms_cost_rows():
    rows = bt.rotated_nms_cost(n=200, iterations=2)
    assert {(r["layout"], r["classes"]) for r in rows} == {("spread", 1), ("spread", 15), ("clustered", 1),
                                                          ("clustered", 15)}
    assert all(r["us"] > 0 and 0 < r["kept"] <= 200 for r in rows)
    clustered = [r for r in rows if r["layout"] == "clustered" and r["classes"] == 1][0]
    assert clustered["kept"] <= 40  # ten overlapping candidates an object: about one kept each
