// Strides and the input size, for every head family and however the heads were made (by shape,
// given, from an NMS JSON or a HEF): stride x grid = input size on every head (issue 28). A
// stride that disagrees would place every box centre at (cell + 0.5) x the wrong stride, boxes
// 2x off without a word; it is refused, naming the head, its grid, its stride and the size.
#include <stdexcept>

#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

namespace {
// YOLOv8/YOLO11 detect from P3: the finest grid has stride 8 when nothing else says otherwise.
constexpr int64_t kDefaultFinestStride = 8;

std::string size_text(int64_t h, int64_t w) { return "(" + std::to_string(h) + ", " + std::to_string(w) + ")"; }
}  // namespace

void check_image_size(int64_t height, int64_t width) {
    if (!(0 < height && height <= kMaxImageSide && 0 < width && width <= kMaxImageSide))
        throw std::invalid_argument("image_size must be positive and at most " + std::to_string(kMaxImageSide) +
                                    " a side, got " + size_text(height, width));
}

void check_stride(const NamedHead& head, int64_t stride) {
    if (!(0 < stride && stride <= kMaxImageSide))
        throw std::invalid_argument(head_text(head) + ": stride must be positive and at most " +
                                    std::to_string(kMaxImageSide) + ", got " + std::to_string(stride));
}

void resolve_strides(std::vector<NamedHead>& heads, const ByName& by_name, const Options& options, Layout& layout) {
    for (const NamedHead& h : heads)
        if (h.stride != 0) check_stride(h, h.stride);
    int64_t ih = options.image_height, iw = options.image_width;
    std::string origin;  // where the size came from when options do not give it, for the messages
    if (ih == 0 && iw == 0) {
        const NamedHead* known = nullptr;
        for (const NamedHead& h : heads)
            if (h.stride != 0 && !known) known = &h;
        if (known) {
            const OutputShape& box = *by_name.at(known->box);
            ih = int64_t(box.height) * known->stride;
            iw = int64_t(box.width) * known->stride;
            origin = " (from " + head_text(*known) + "'s stride " + std::to_string(known->stride) + " x grid " +
                     grid_text(box.height, box.width) + ")";
        } else {
            const OutputShape* finest = nullptr;
            for (const NamedHead& h : heads) {
                const OutputShape* b = by_name.at(h.box);
                if (!finest || int64_t(b->height) * b->width > int64_t(finest->height) * finest->width) finest = b;
            }
            if (finest) {
                ih = finest->height * kDefaultFinestStride;
                iw = finest->width * kDefaultFinestStride;
            }
        }
    }
    check_image_size(ih, iw);
    for (NamedHead& h : heads) {
        const OutputShape& box = *by_name.at(h.box);
        const int64_t gh = box.height, gw = box.width;
        const bool divides = ih % gh == 0 && iw % gw == 0 && ih / gh == iw / gw;
        if (h.stride == 0) {
            if (!divides)
                throw std::invalid_argument(head_text(h) + ": grid " + grid_text(box.height, box.width) +
                                            " does not divide image_size " + size_text(ih, iw) + origin +
                                            " into one stride (stride x grid must equal the image size); check image_size");
            h.stride = int(ih / gh);
        } else if (h.stride * gh != ih || h.stride * gw != iw) {
            const std::string fit = divides ? "this head's stride would be " + std::to_string(ih / gh)
                                            : "no stride fits grid " + grid_text(box.height, box.width) + " in it";
            throw std::invalid_argument(head_text(h) + ": stride " + std::to_string(h.stride) + " x grid " +
                                        grid_text(box.height, box.width) + " is " + size_text(h.stride * gh, h.stride * gw) +
                                        ", not the image size " + size_text(ih, iw) + origin +
                                        "; stride x grid must equal the image size on every head (" + fit +
                                        "): fix the stride or image_size");
        }
    }
    layout.image_height = int(ih);
    layout.image_width = int(iw);
}

}  // namespace hailo_decode::setup::detail
