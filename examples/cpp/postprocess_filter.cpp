// The decode as a native pipeline links it: a shared object (a GStreamer element, a TAPPAS-style
// post-process .so) with the static hailo_decode core inside. It links because the installed core
// is position-independent; built with hidden visibility, it exports none of the core's symbols,
// only the entry point below (so two such plugins in one process never interpose each other).
#include "postprocess_filter.hpp"

#include <cstdio>
#include <exception>
#include <vector>

#include "hailo_decode/decoder.hpp"
#include "hailo_decode/pack.hpp"
#include "synthetic_frame.hpp"

extern "C" __attribute__((visibility("default"))) int synthetic_postprocess(const void* const* tensors,
                                                                              const size_t* elements, float* out,
                                                                              size_t out_floats) {
    try {
        // Built once, on the first frame: later frames allocate nothing inside the decoder.
        static hailo_decode::Decoder decoder(synthetic::make_config());
        decoder.decode(tensors, elements, 1);  // checks every buffer's size before reading it
        const auto [dets, n] = decoder.frame(0);
        std::vector<float> boxes(4 * n), scores(n);
        std::vector<int32_t> class_ids(n);
        for (size_t i = 0; i < n; ++i) {
            for (int k = 0; k < 4; ++k) boxes[4 * i + size_t(k)] = dets[i].box[k];
            scores[i] = dets[i].score;
            class_ids[i] = dets[i].class_id;
        }
        hailo_decode::pack_hailo_nms_by_class(boxes.data(), scores.data(), class_ids.data(), n, synthetic::kClasses,
                                              synthetic::kMaxPerClass, out, out_floats);
        return int(n);
    } catch (const std::exception& e) {  // no exception crosses a C boundary
        std::fprintf(stderr, "synthetic_postprocess: %s\n", e.what());
        return -1;
    }
}
