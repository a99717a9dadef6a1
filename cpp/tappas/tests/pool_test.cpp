// DetectionPool: a detection is handed out again only once nothing but the pool holds it, and then
// as if new (its previous frame's sub-objects, scaling box and stream id gone).
#include <cstdio>
#include <memory>
#include <typeinfo>
#include <vector>

#include "detection_pool.hpp"

namespace {

int failures = 0, checks = 0;
void check(bool ok, const char* what) {
    ++checks;
    if (!ok) {
        ++failures;
        std::fprintf(stderr, "FAILED: %s\n", what);
    }
}

using hailo_decode::tappas::DetectionPool;

std::vector<HailoDetectionPtr> frame(DetectionPool& pool, int n, int class_id) {
    pool.begin_frame();
    std::vector<HailoDetectionPtr> out;
    for (int i = 0; i < n; ++i)
        out.push_back(pool.take(HailoBBox(0.1f * float(i), 0.2f, 0.3f, 0.4f), class_id, "person", 0.5f));
    return out;
}

}  // namespace

int main() {
    DetectionPool pool;
    std::vector<HailoDetectionPtr> first = frame(pool, 3, 1);
    first[0]->add_object(std::make_shared<HailoUserMeta>(7, "meta", 0.0f));
    first[1]->set_scaling_bbox(HailoBBox(0.5f, 0.5f, 0.5f, 0.5f));
    first[2]->set_stream_id("stream-1");

    // Held downstream (the first frame's ROI still lives): new detections.
    std::vector<HailoDetectionPtr> second = frame(pool, 3, 2);
    for (const auto& a : first)
        for (const auto& b : second) check(a != b, "a detection still held is not handed out again");

    // The first frame dropped: its detections come back, reset; the second's are still held.
    const std::vector<HailoDetection*> first_raw = {first[0].get(), first[1].get(), first[2].get()};
    first.clear();
    std::vector<HailoDetectionPtr> third = frame(pool, 3, 3);
    for (size_t i = 0; i < 3; ++i) {
        check(third[i].get() == first_raw[i], "a dropped detection is reused");
        check(third[i]->get_class_id() == 3 && third[i]->get_label() == "person" && third[i]->get_confidence() == 0.5f,
              "class, label and confidence are the new ones");
        check(third[i]->get_bbox().xmin() == 0.1f * float(i) && third[i]->get_bbox().height() == 0.4f, "the new box");
        check(third[i]->get_objects().empty(), "no sub-objects of the previous frame");
        const HailoBBox s = third[i]->get_scaling_bbox();
        check(s.xmin() == 0.0f && s.ymin() == 0.0f && s.width() == 1.0f && s.height() == 1.0f,
              "the default scaling box");
        check(third[i]->get_stream_id().empty(), "no stream id");
    }
    for (const auto& d : third) {
        const HailoDetection& object = *d;
        check(typeid(object) == typeid(HailoDetection), "a HailoDetection itself (TAPPAS' Python module knows no subclass)");
    }
    // More than the pool holds free: the rest are new.
    second.clear();
    std::vector<HailoDetectionPtr> fourth = frame(pool, 5, 4);
    check(fourth.size() == 5 && fourth[4]->get_class_id() == 4, "the pool grows when every pooled one is held");

    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
