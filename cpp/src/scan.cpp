#include "scan.hpp"

namespace hailo_decode {
namespace detail {
namespace {

template <typename T, typename Limit>
void scan(const TensorView& v, const std::vector<Limit>& limit, const T* frame, ScanResult& out) {
    const int C = v.channels;
    const size_t* chan = v.channel_offset.data();
    const Limit* lim = limit.data();
    for (int r = 0; r < v.height; ++r) {
        for (int w = 0; w < v.width; ++w) {
            const T* cell = frame + v.cell(r, w);
            const size_t first = out.classes.size();
            for (int c = 0; c < C; ++c)
                if (Limit(cell[chan[c]]) >= lim[c]) out.classes.push_back(c);
            if (out.classes.size() != first)
                out.cells.push_back({r, w, uint32_t(first), uint32_t(out.classes.size() - first)});
        }
    }
}

}  // namespace

void scan_class_tensor(const TensorView& v, const ClassScorer& s, const void* frame, ScanResult& out) {
    switch (v.dtype) {
        case DType::U8: scan(v, s.q_min, static_cast<const uint8_t*>(frame), out); break;
        case DType::U16: scan(v, s.q_min, static_cast<const uint16_t*>(frame), out); break;
        case DType::F32: scan(v, s.x_min, static_cast<const float*>(frame), out); break;
    }
}

}  // namespace detail
}  // namespace hailo_decode
