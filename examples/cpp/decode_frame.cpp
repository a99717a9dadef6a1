// Decodes one frame of raw YOLOv8 heads with the installed hailo_decode C++ package:
//
//   decode_frame [nms_by_class.bin]
//
// prints the detections, packs them into HailoRT's HAILO_NMS_BY_CLASS float32 buffer (written to
// the file when one is given), decodes the frame again through the shared object of
// postprocess_filter.cpp, and exits non-zero unless every result is the one the frame was built
// to give (synthetic_frame.hpp), so that running it is a test.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hailo_decode/decoder.hpp"
#include "hailo_decode/pack.hpp"
#include "postprocess_filter.hpp"
#include "synthetic_frame.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

bool near(float a, float b) { return std::fabs(a - b) <= 1e-5f; }

// What the frame must give, best score first: every kept score of synthetic::cells() on its box.
struct Expected {
    float box[4];
    float score;
    int class_id;
};

std::vector<Expected> expected_detections() {
    std::vector<Expected> out;
    for (const synthetic::Cell& c : synthetic::cells())
        for (const synthetic::Score& s : c.scores)
            if (s.kept) {
                Expected e;
                synthetic::expected_box(c, e.box);
                e.score = float(s.byte) / 255.0f;
                e.class_id = s.class_id;
                out.push_back(e);
            }
    for (size_t i = 1; i < out.size(); ++i)  // insertion sort, score-descending (no ties here)
        for (size_t j = i; j > 0 && out[j].score > out[j - 1].score; --j) std::swap(out[j], out[j - 1]);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const hailo_decode::Config config = synthetic::make_config();
        hailo_decode::Decoder decoder(config);  // checks the configuration once, throws on a bad one

        // The six output buffers, read in place: a pointer and an element count for each.
        const std::vector<std::vector<uint8_t>> frame = synthetic::make_frame();
        std::vector<const void*> tensors;
        std::vector<size_t> elements;
        for (const auto& buffer : frame) {
            tensors.push_back(buffer.data());
            elements.push_back(buffer.size());
        }
        decoder.decode(tensors.data(), elements.data(), 1);

        // The detections stay valid until the next decode() on this decoder.
        const auto [dets, n] = decoder.frame(0);
        std::printf("%zu detections (class, score, [ymin, xmin, ymax, xmax] normalized):\n", n);
        for (size_t i = 0; i < n; ++i)
            std::printf("  %-8s %.3f  [%.4f, %.4f, %.4f, %.4f]\n", synthetic::kClassNames[dets[i].class_id],
                        double(dets[i].score), double(dets[i].box[0]), double(dets[i].box[1]),
                        double(dets[i].box[2]), double(dets[i].box[3]));

        const std::vector<Expected> want = expected_detections();
        check(n == want.size(), "number of detections");
        for (size_t i = 0; i < n && i < want.size(); ++i) {
            check(dets[i].class_id == want[i].class_id, "class id");
            check(near(dets[i].score, want[i].score), "score");
            for (int k = 0; k < 4; ++k) check(near(dets[i].box[k], want[i].box[k]), "box corner");
        }

        // HailoRT's HAILO_NMS_BY_CLASS buffer: classes in order, each a float count followed by that
        // many [ymin, xmin, ymax, xmax, score] records, back to back; zeros after the last class.
        // Room for classes x (1 + 5 x max_per_class) floats.
        std::vector<float> boxes(4 * n), scores(n);
        std::vector<int32_t> class_ids(n);
        for (size_t i = 0; i < n; ++i) {
            std::memcpy(&boxes[4 * i], dets[i].box, sizeof dets[i].box);
            scores[i] = dets[i].score;
            class_ids[i] = dets[i].class_id;
        }
        const size_t floats = hailo_decode::hailo_nms_by_class_floats(synthetic::kClasses, synthetic::kMaxPerClass);
        std::vector<float> nms(floats, -1.0f);
        const size_t used = hailo_decode::pack_hailo_nms_by_class(boxes.data(), scores.data(), class_ids.data(), n,
                                                                  synthetic::kClasses, synthetic::kMaxPerClass,
                                                                  nms.data(), nms.size());
        check(floats == size_t(synthetic::kClasses) * (1 + 5 * synthetic::kMaxPerClass), "buffer size");
        // The same buffer written here from the expected detections (one per class in this frame).
        std::vector<float> want_nms(floats, 0.0f);
        size_t pos = 0;
        for (int k = 0; k < synthetic::kClasses; ++k) {
            const size_t count_at = pos++;
            for (const Expected& e : want)
                if (e.class_id == k) {
                    for (int c = 0; c < 4; ++c) want_nms[pos++] = e.box[c];
                    want_nms[pos++] = e.score;
                    want_nms[count_at] += 1.0f;
                }
        }
        check(used == pos, "floats written before the zeroed tail");
        bool same = true;
        for (size_t i = 0; i < floats; ++i) same = same && near(nms[i], want_nms[i]);
        check(same, "HAILO_NMS_BY_CLASS buffer");

        // The same frame through the shared object: the same bytes.
        std::vector<float> from_filter(floats, -1.0f);
        const int filter_count =
            synthetic_postprocess(tensors.data(), elements.data(), from_filter.data(), from_filter.size());
        check(filter_count == int(n), "detections from the shared object");
        check(std::memcmp(from_filter.data(), nms.data(), floats * sizeof(float)) == 0,
              "HAILO_NMS_BY_CLASS buffer from the shared object");

        // A buffer shorter than the frame needs is refused before anything is read.
        elements[1] -= 1;
        bool refused = false;
        try {
            decoder.decode(tensors.data(), elements.data(), 1);
        } catch (const std::invalid_argument& e) {
            refused = std::strstr(e.what(), "synthetic/cls_s8") != nullptr;
            std::printf("short buffer refused: %s\n", e.what());
        }
        check(refused, "a short class buffer is refused, naming the output");

        if (argc > 1) {
            std::FILE* f = std::fopen(argv[1], "wb");
            check(f != nullptr, "open the output file");
            if (f) {
                check(std::fwrite(nms.data(), sizeof(float), floats, f) == floats, "write the output file");
                check(std::fclose(f) == 0, "close the output file");
                std::printf("HAILO_NMS_BY_CLASS buffer (%zu float32) written to %s\n", floats, argv[1]);
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    if (failures) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("all checks passed\n");
    return 0;
}
