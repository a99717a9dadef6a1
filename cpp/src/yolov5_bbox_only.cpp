#include "hailo_decode/yolov5_bbox_only.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tensor_view.hpp"

namespace hailo_decode {

using namespace detail;

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

template <typename T>
inline float value_at(const TensorView& v, const T* frame, size_t index, int c) {
    if constexpr (std::is_same<T, float>::value) return frame[index];
    else return dequantize(float(frame[index]), v.zp[size_t(c)], v.scale[size_t(c)]);
}

}  // namespace

struct Yolov5BboxOnly::Impl {
    Config cfg;
    std::vector<TensorView> views;
    struct Head {
        int output;
        std::vector<float> anchors;
    };
    std::vector<Head> heads;  // in the op's order: output names sorted
    size_t proposals = 0;

    template <typename T>
    void head(const Head& h, const T* frame, float*& out) const {
        const TensorView& v = views[size_t(h.output)];
        const Settings& s = cfg.settings;
        const int nc = cfg.num_classes, entry = 5 + nc;
        const int na = int(h.anchors.size() / 2);
        const float image_w = float(s.image_width), image_h = float(s.image_height);
        for (int row = 0; row < v.height; ++row)
            for (int col = 0; col < v.width; ++col) {
                const size_t cell = v.cell(row, col);
                for (int a = 0; a < na; ++a) {
                    const int base = a * entry;
                    auto val = [&](int k) { return value_at(v, frame, cell + v.channel_offset[size_t(base + k)], base + k); };
                    const float tx = val(0), ty = val(1), tw = val(2), th = val(3);
                    const float w = std::pow(2.0f * tw, 2.0f) * h.anchors[size_t(2 * a)] / image_w;
                    const float hh = std::pow(2.0f * th, 2.0f) * h.anchors[size_t(2 * a + 1)] / image_h;
                    const float xc = (tx * 2.0f - 0.5f + float(col)) / float(v.width);
                    const float yc = (ty * 2.0f - 0.5f + float(row)) / float(v.height);
                    const float x_min = xc - w / 2.0f, y_min = yc - hh / 2.0f;
                    out[0] = y_min;
                    out[1] = x_min;
                    out[2] = y_min + hh;
                    out[3] = x_min + w;
                    for (int k = 4; k < entry; ++k) out[k] = val(k);
                    out += entry;
                }
            }
    }
};

Yolov5BboxOnly::Yolov5BboxOnly(Config config) : impl_(new Impl) {
    Impl& m = *impl_;
    m.cfg = std::move(config);
    const Config& c = m.cfg;
    if (c.kind != HeadKind::YOLOV5) bad("the yolov5_bbox_only form needs YOLOv5 heads (an anchor head config)");
    if (c.num_classes <= 0) bad("num_classes must be positive, got " + std::to_string(c.num_classes));
    if (c.settings.image_height <= 0 || c.settings.image_width <= 0) bad("image size must be positive");
    for (const TensorSpec& o : c.outputs) m.views.push_back(make_tensor_view(o));
    for (const HeadSpec& hs : c.heads) {
        if (hs.box_output < 0 || size_t(hs.box_output) >= m.views.size()) bad("head refers to an output index out of range");
        const TensorView& v = m.views[size_t(hs.box_output)];
        if (hs.anchors.empty() || hs.anchors.size() % 2) bad("output '" + v.spec->name + "': anchors must be (w, h) pairs");
        const int na = int(hs.anchors.size() / 2);
        if (v.channels != na * (5 + c.num_classes))
            bad("output '" + v.spec->name + "': channels must be anchors x (5 + classes) = " + std::to_string(na) + " x " +
                std::to_string(5 + c.num_classes) + ", got " + std::to_string(v.channels));
        Impl::Head h;
        h.output = hs.box_output;
        for (int a : hs.anchors) h.anchors.push_back(float(a));
        m.heads.push_back(std::move(h));
        m.proposals += size_t(v.height) * size_t(v.width) * size_t(na);
    }
    std::stable_sort(m.heads.begin(), m.heads.end(), [&](const Impl::Head& a, const Impl::Head& b) {
        return m.views[size_t(a.output)].spec->name < m.views[size_t(b.output)].spec->name;
    });
}

Yolov5BboxOnly::~Yolov5BboxOnly() = default;

size_t Yolov5BboxOnly::proposals() const { return impl_->proposals; }
size_t Yolov5BboxOnly::row_floats() const { return size_t(5 + impl_->cfg.num_classes); }
size_t Yolov5BboxOnly::frame_floats() const { return proposals() * row_floats(); }

void Yolov5BboxOnly::write(const void* const* tensors, const size_t* buffer_elements, size_t n_frames, float* out,
                           size_t out_floats) const {
    const Impl& m = *impl_;
    for (size_t i = 0; i < m.views.size(); ++i) {
        const TensorView& v = m.views[i];
        const size_t need = needed_elements(v, n_frames);
        if (tensors[i] == nullptr && n_frames > 0) bad("output '" + v.spec->name + "': no buffer");
        if (buffer_elements[i] < need)
            bad("output '" + v.spec->name + "': buffer holds " + std::to_string(buffer_elements[i]) + " elements, " +
                std::to_string(n_frames) + " frame(s) need " + std::to_string(need));
    }
    if (n_frames && out_floats / n_frames < frame_floats())
        bad("out holds " + std::to_string(out_floats) + " float32 values, " + std::to_string(n_frames) +
            " frame(s) of the yolov5_bbox_only form need " + std::to_string(n_frames * frame_floats()));
    for (size_t i = 0; i < m.views.size(); ++i) {
        const TensorView& v = m.views[i];
        if (v.dtype != DType::F32) continue;
        for (size_t f = 0; f < n_frames; ++f) {
            const float* frame = frame_ptr<float>(tensors[i], v, f);
            for (int r = 0; r < v.height; ++r)
                for (int w = 0; w < v.width; ++w)
                    for (int c = 0; c < v.channels; ++c)
                        if (!std::isfinite(frame[v.cell(r, w) + v.channel_offset[size_t(c)]]))
                            bad("output '" + v.spec->name + "': non-finite value at frame " + std::to_string(f) +
                                ", (row, col, channel) = (" + std::to_string(r) + ", " + std::to_string(w) + ", " +
                                std::to_string(c) + ")");
        }
    }
    for (size_t f = 0; f < n_frames; ++f) {
        float* o = out + f * frame_floats();
        for (const Impl::Head& h : m.heads) {
            const TensorView& v = m.views[size_t(h.output)];
            switch (v.dtype) {
                case DType::U8: m.head(h, frame_ptr<uint8_t>(tensors[h.output], v, f), o); break;
                case DType::U16: m.head(h, frame_ptr<uint16_t>(tensors[h.output], v, f), o); break;
                case DType::F32: m.head(h, frame_ptr<float>(tensors[h.output], v, f), o); break;
            }
        }
    }
}

}  // namespace hailo_decode
