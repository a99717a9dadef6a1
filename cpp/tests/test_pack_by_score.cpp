// Unit tests of the HAILO_NMS_BY_SCORE writer (pack_by_score), run by ctest.
// The expected bytes come from a packed struct laid out as hailort.h declares hailo_detection_t
// and from a transcription of HailoRT 4.23's writing loop (fill_nms_by_score_format_buffer), not
// from the writer under test.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "hailo_decode/pack_by_score.hpp"
#include "check.hpp"

using namespace hailo_decode;



// hailort.h, inside #pragma pack(push, 1): hailo_detection_t and hailo_detections_t.
#pragma pack(push, 1)
struct HailoDetection {
    float y_min, x_min, y_max, x_max, score;
    uint16_t class_id;
};
#pragma pack(pop)
static_assert(sizeof(HailoDetection) == 22, "hailo_detection_t is 22 bytes packed");

struct Det {
    float box[4];
    float score;
    int32_t cls;
};

// HailoRT 4.23's loop over the sorted survivors: it breaks only once the count EXCEEDS the total,
// so it writes records 0..max_total (max_total + 1 of them) when there are more survivors. Writes
// into a buffer with room for that extra record; returns its count.
static uint16_t hailort_4_23_by_score(const std::vector<Det>& dets, size_t max_total, std::vector<uint8_t>& buf) {
    uint16_t total = 0;
    for (const Det& d : dets) {
        if (total > max_total) break;
        HailoDetection r{d.box[0], d.box[1], d.box[2], d.box[3], d.score, uint16_t(d.cls)};
        const size_t off = sizeof(uint16_t) + size_t(total) * sizeof(HailoDetection);
        if (buf.size() < off + sizeof(r)) buf.resize(off + sizeof(r), 0xEE);
        std::memcpy(buf.data() + off, &r, sizeof(r));
        ++total;
    }
    std::memcpy(buf.data(), &total, sizeof(total));
    return total;
}

static void split(const std::vector<Det>& dets, std::vector<float>& boxes, std::vector<float>& scores,
                  std::vector<int32_t>& cls) {
    for (const Det& d : dets) {
        boxes.insert(boxes.end(), d.box, d.box + 4);
        scores.push_back(d.score);
        cls.push_back(d.cls);
    }
}

static std::vector<Det> five() {
    // Score-descending with a tie (0.5, 0.5) and class ids above 255 (a uint16 field, not a byte).
    return {{{0.10f, 0.20f, 0.30f, 0.40f}, 0.90f, 3},
            {{0.00f, 0.00f, 1.00f, 1.00f}, 0.80f, 300},
            {{0.25f, 0.50f, 0.75f, 0.95f}, 0.50f, 0},
            {{0.05f, 0.15f, 0.35f, 0.45f}, 0.50f, 65535},
            {{-0.1f, 1.20f, 0.20f, 1.50f}, 0.20f, 7}};  // unclipped coordinates are written as they are
}

static void test_size() {
    CHECK(hailo_nms_by_score_bytes(0) == 2);
    CHECK(hailo_nms_by_score_bytes(8000) == 2 + 22 * 8000);  // 80 classes x 100: 176,002 bytes
    CHECK(hailo_nms_by_score_bytes(65535) == 2 + 22 * size_t(65535));
    CHECK(throws([] { hailo_nms_by_score_bytes(65536); }, "65535"));
}

static void test_equals_hailort_within_the_total() {
    const std::vector<Det> dets = five();
    std::vector<float> boxes, scores;
    std::vector<int32_t> cls;
    split(dets, boxes, scores, cls);
    for (size_t max_total : {size_t(5), size_t(6), size_t(100)}) {
        std::vector<uint8_t> ours(hailo_nms_by_score_bytes(max_total), 0xAB);
        const size_t used = pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), dets.size(), max_total,
                                                    ours.data(), ours.size());
        CHECK(used == 2 + 22 * 5);
        std::vector<uint8_t> theirs(hailo_nms_by_score_bytes(max_total), 0);
        CHECK(hailort_4_23_by_score(dets, max_total, theirs) == 5);
        CHECK(theirs.size() == ours.size());  // HailoRT stayed inside its buffer here
        CHECK(std::memcmp(ours.data(), theirs.data(), used) == 0);
        bool tail_zero = true;
        for (size_t i = used; i < ours.size(); ++i) tail_zero = tail_zero && ours[i] == 0;
        CHECK(tail_zero);
    }
    // Field by field, through the packed struct: record 1 is class 300 at bytes 24..45.
    std::vector<uint8_t> out(hailo_nms_by_score_bytes(5));
    pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), dets.size(), 5, out.data(), out.size());
    uint16_t count;
    std::memcpy(&count, out.data(), 2);
    HailoDetection r;
    std::memcpy(&r, out.data() + 2 + 22, sizeof(r));
    CHECK(count == 5 && r.y_min == 0.0f && r.x_max == 1.0f && r.score == 0.80f && r.class_id == 300);
    std::memcpy(&r, out.data() + 2 + 4 * 22, sizeof(r));
    CHECK(r.y_min == -0.1f && r.x_min == 1.20f && r.class_id == 7);
}

static void test_more_than_the_total() {
    // 5 survivors, total 3: HailoRT 4.23 writes 4 records (the 4th at bytes 68..89, past its 68-byte
    // buffer) and a count of 4; ours writes 3 and says 3, and the first 3 records are the same bytes.
    const std::vector<Det> dets = five();
    std::vector<float> boxes, scores;
    std::vector<int32_t> cls;
    split(dets, boxes, scores, cls);
    std::vector<uint8_t> theirs(hailo_nms_by_score_bytes(3), 0);
    CHECK(hailort_4_23_by_score(dets, 3, theirs) == 4);
    CHECK(theirs.size() == hailo_nms_by_score_bytes(3) + 22);  // one record past the end
    std::vector<uint8_t> ours(hailo_nms_by_score_bytes(3) + 22, 0xAB);  // a guard record after the buffer
    const size_t used = pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), dets.size(), 3, ours.data(),
                                                hailo_nms_by_score_bytes(3));
    CHECK(used == hailo_nms_by_score_bytes(3));
    uint16_t count;
    std::memcpy(&count, ours.data(), 2);
    CHECK(count == 3);
    CHECK(std::memcmp(ours.data() + 2, theirs.data() + 2, 3 * 22) == 0);
    bool guard_intact = true;
    for (size_t i = used; i < ours.size(); ++i) guard_intact = guard_intact && ours[i] == 0xAB;
    CHECK(guard_intact);
    // Total 0: only the count.
    std::vector<uint8_t> two(2, 0xAB);
    CHECK(pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), dets.size(), 0, two.data(), 2) == 2);
    CHECK(two[0] == 0 && two[1] == 0);
}

static void test_unaligned_destination() {
    // Records are at odd offsets anyway; a destination at an odd address must work the same.
    const std::vector<Det> dets = five();
    std::vector<float> boxes, scores;
    std::vector<int32_t> cls;
    split(dets, boxes, scores, cls);
    const size_t size = hailo_nms_by_score_bytes(5);
    std::vector<uint8_t> aligned(size), shifted(size + 1);
    pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), 5, 5, aligned.data(), size);
    pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), 5, 5, shifted.data() + 1, size);
    CHECK(std::memcmp(aligned.data(), shifted.data() + 1, size) == 0);
}

static void test_rejects_bad_input_before_writing() {
    std::vector<Det> dets = five();
    std::vector<float> boxes, scores;
    std::vector<int32_t> cls;
    split(dets, boxes, scores, cls);
    std::vector<uint8_t> out(hailo_nms_by_score_bytes(5), 0xAB);
    auto untouched = [&] {
        for (uint8_t b : out)
            if (b != 0xAB) return false;
        return true;
    };
    auto pack = [&](size_t n, size_t total, size_t bytes) {
        return [&, n, total, bytes] { pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), n, total, out.data(), bytes); };
    };
    CHECK(throws(pack(5, 5, out.size() - 1), "too small"));
    CHECK(throws(pack(5, 65536, out.size()), "65535"));
    cls[2] = -1;
    CHECK(throws(pack(5, 5, out.size()), "class id -1"));
    cls[2] = 65536;
    CHECK(throws(pack(5, 5, out.size()), "class id 65536"));
    cls[2] = 0;
    scores[3] = 0.6f;  // rises after 0.5
    CHECK(throws(pack(5, 5, out.size()), "score-descending"));
    scores[3] = std::numeric_limits<float>::quiet_NaN();
    CHECK(throws(pack(5, 5, out.size()), "score-descending"));
    CHECK(untouched());
    // Past the total nothing is written, so the order there is not checked.
    scores[3] = 0.5f;
    scores[4] = 0.95f;
    CHECK(pack_hailo_nms_by_score(boxes.data(), scores.data(), cls.data(), 5, 4, out.data(), out.size()) == 2 + 22 * 4);
}

int main() {
    test_size();
    test_equals_hailort_within_the_total();
    test_more_than_the_total();
    test_unaligned_destination();
    test_rejects_bad_input_before_writing();
    return report();
}
