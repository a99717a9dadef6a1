// add_detections (roi_objects.hpp) against TAPPAS' own HailoROI::add_object, one call per detection:
// the same objects in the same order, with the same scaling boxes and stream ids, for the whole
// frame and for a sub-ROI with a stream id (a cascade's crop), and the ROI's earlier objects kept.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "roi_objects.hpp"

namespace {

int failures = 0, checks = 0;
void check(bool ok, const std::string& what) {
    ++checks;
    if (!ok) {
        ++failures;
        std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    }
}

bool same_box(const HailoBBox& a, const HailoBBox& b) {
    return a.xmin() == b.xmin() && a.ymin() == b.ymin() && a.width() == b.width() && a.height() == b.height();
}

// Three detections, the second already scaled by an earlier element (its scaling box is composed).
std::vector<HailoDetectionPtr> detections() {
    std::vector<HailoDetectionPtr> out;
    for (int i = 0; i < 3; ++i)
        out.push_back(std::make_shared<HailoDetection>(HailoBBox(0.1f * float(i), 0.2f, 0.3f, 0.4f), i + 1, "person",
                                                       0.5f + 0.1f * float(i)));
    out[1]->set_scaling_bbox(HailoBBox(0.25f, 0.125f, 0.5f, 0.75f));
    return out;
}

void compare(const HailoBBox& roi_box, const std::string& stream_id, const std::string& what) {
    HailoROI theirs(roi_box, stream_id), ours(roi_box, stream_id);
    // An object the ROI held before (another element's), kept first.
    const auto earlier = std::make_shared<HailoClassification>("type", 1, "label", 0.9f);
    theirs.add_object(earlier);
    ours.add_object(earlier);

    for (const HailoDetectionPtr& d : detections()) theirs.add_object(d);
    std::vector<HailoDetectionPtr> added = detections();
    const std::vector<HailoDetectionPtr> kept = added;
    hailo_decode::tappas::add_detections(ours, added);
    check(added.empty(), what + ": the list is emptied");

    const std::vector<HailoObjectPtr> a = theirs.get_objects(), b = ours.get_objects();
    check(a.size() == 4 && b.size() == 4, what + ": four objects");
    if (a.size() != 4 || b.size() != 4) return;
    check(b[0] == earlier, what + ": the earlier object first");
    for (size_t i = 1; i < 4; ++i) {
        auto x = std::dynamic_pointer_cast<HailoDetection>(a[i]);
        auto y = std::dynamic_pointer_cast<HailoDetection>(b[i]);
        check(x && y, what + ": detections");
        if (!x || !y) continue;
        check(y == kept[i - 1], what + ": the same object, in order");
        check(y->get_class_id() == x->get_class_id() && y->get_confidence() == x->get_confidence(),
              what + ": class and confidence");
        check(same_box(y->get_bbox(), x->get_bbox()), what + ": box");
        check(same_box(y->get_scaling_bbox(), x->get_scaling_bbox()), what + ": scaling box as add_object sets it");
        check(y->get_stream_id() == x->get_stream_id(), what + ": stream id as add_object sets it");
    }
}

}  // namespace

int main() {
    compare(HailoBBox(0.0f, 0.0f, 1.0f, 1.0f), "", "whole frame");
    compare(HailoBBox(0.0f, 0.0f, 1.0f, 1.0f), "camera-2", "whole frame, a stream id");
    compare(HailoBBox(0.2f, 0.3f, 0.5f, 0.4f), "", "a sub-ROI");
    compare(HailoBBox(0.2f, 0.3f, 0.5f, 0.4f), "camera-2", "a sub-ROI, a stream id");

    // Nothing to add: the ROI is left as it was.
    HailoROI roi(HailoBBox(0.0f, 0.0f, 1.0f, 1.0f));
    std::vector<HailoDetectionPtr> none;
    hailo_decode::tappas::add_detections(roi, none);
    check(roi.get_objects().empty(), "nothing added");

    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
