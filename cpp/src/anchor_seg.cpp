#include "anchor_seg.hpp"

#include <stdexcept>
#include <string>

namespace hailo_decode {
namespace detail {

int anchor_coefficients(const Config& cfg, const std::vector<TensorView>& views) {
    if (cfg.kind != HeadKind::YOLOV5 || cfg.proto_output < 0) return 0;
    if (size_t(cfg.proto_output) >= views.size())
        throw std::invalid_argument("proto_output index " + std::to_string(cfg.proto_output) + " out of range");
    return views[size_t(cfg.proto_output)].channels;
}

AnchorCoefViews make_anchor_coef_views(const Config& cfg, const std::vector<TensorView>& views) {
    AnchorCoefViews out;
    const int n = anchor_coefficients(cfg, views);
    const int entry = 5 + cfg.num_classes + n;
    for (const HeadSpec& h : cfg.heads) {
        const TensorView& main = views[size_t(h.box_output)];
        const int anchors = int(h.anchors.size() / 2);
        out.first.push_back(out.views.size());
        out.anchors.push_back(anchors);
        for (int a = 0; a < anchors; ++a) {
            TensorView v = main;
            v.channels = n;
            v.channel_offset.clear();
            v.zp.clear();
            v.scale.clear();
            for (int k = 0; k < n; ++k) {
                const size_t ch = size_t(a * entry + 5 + cfg.num_classes + k);
                v.channel_offset.push_back(main.channel_offset[ch]);
                if (!main.zp.empty()) {  // (float32 views have no quantization)
                    v.zp.push_back(main.zp[ch]);
                    v.scale.push_back(main.scale[ch]);
                }
            }
            v.contiguous_channels = false;  // offsets start past channel 0
            out.views.push_back(std::move(v));
        }
    }
    return out;
}

}  // namespace detail
}  // namespace hailo_decode
