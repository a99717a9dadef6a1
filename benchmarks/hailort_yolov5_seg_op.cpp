// Benchmark-only reference: HailoRT 4.23's yolov5_seg op (libhailort/src/net_flow/ops/
// yolov5_seg_post_process.cpp, yolov5_post_process.{hpp,cpp}, nms_post_process.{hpp,cpp}) rebuilt
// outside HailoRT: its mask work is the op's own code paths on the op's own libraries, Eigen 3.4
// (Debian's libeigen3-dev, the version HailoRT fetches) for the coefficient x prototype product and
// the sigmoid, and HailoRT's copy of stb_image_resize.h (#included from the HailoRT source tree
// given with -I, not copied) for the resize; its decode, sort, NMS and byte-mask fill are the same
// functions transliterated (HailoRT's Buffer / MemoryView / Expected plumbing left out). Never built
// into the package: benchmarks/seg_hailort_op.py compiles it with g++ and runs it.
//
// Input (stdin, little-endian): uint32 classes, image_h, image_w, heads; per head (in the op's
// std::map order) uint32 H, W, anchors, dtype (0 uint8, 1 uint16), anchors x (w, h) int32,
// float zp, scale, then H x (A x (5 + classes + 32)) x W values (NHCW, unpadded); the prototype as
// uint32 H, W, dtype, float zp, scale, H x 32 x W values; float score_th, iou_th, double
// mask_threshold, uint32 max_total, buffer_size, iterations.
// Output: the last frame's buffer_size bytes to stdout; "seconds <wall> cpu <thread cpu>" per
// iteration to stderr.
#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include "stb_image_resize.h"

namespace {

struct BBox {
    float y_min, x_min, y_max, x_max, score;
};
#pragma pack(push, 1)
struct DetectionWithByteMask {  // hailo_detection_with_byte_mask_t (hailort.h, 4.23)
    float y_min, x_min, y_max, x_max;
    float score;
    uint16_t class_id;
    uint64_t mask_size;
    uint8_t* mask;
};
#pragma pack(pop)
static_assert(sizeof(DetectionWithByteMask) == 38, "HailoRT's packed record");

struct Detection {
    uint32_t class_id;
    std::vector<float> coefficients;
    BBox bbox;
    DetectionWithByteMask with_mask;
};

struct Head {
    uint32_t H, W, A, dtype;
    std::vector<int> anchors;
    float zp, scale;
    std::vector<uint8_t> bytes;
};

constexpr float REMOVED = 0.0f;  // REMOVED_CLASS_SCORE
constexpr uint32_t MASKS = 32;   // MASK_COEFFICIENT_SIZE

template <typename T>
bool read(T& v) { return std::fread(&v, sizeof(T), 1, stdin) == 1; }

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename Src>
float deq(Src q, float zp, float scale) { return (float(q) - zp) * scale; }

struct Op {
    uint32_t nc, image_h, image_w;
    float score_th, iou_th;
    double mask_threshold;
    uint32_t max_total;
    std::vector<Head> heads;
    Head proto;
    std::vector<Detection> detections;
    std::vector<float> transformed_proto, mult_result, resized;

    template <typename Src>
    void extract(const Head& h) {  // YOLOv5PostProcessOp::extract_detections, should_sigmoid() true
        const Src* data = reinterpret_cast<const Src*>(h.bytes.data());
        const uint32_t entry = 5 + nc + MASKS;
        const uint32_t row_size = h.W * h.A * entry;
        for (uint32_t row = 0; row < h.H; row++)
            for (uint32_t col = 0; col < h.W; col++)
                for (uint32_t a = 0; a < h.A; a++) {
                    const uint32_t e = row_size * row + col + (a * entry) * h.W;
                    const float obj = sigmoid(deq(data[e + 4 * h.W], h.zp, h.scale));
                    if (obj < score_th) continue;
                    const float tx = sigmoid(deq(data[e], h.zp, h.scale)), ty = sigmoid(deq(data[e + h.W], h.zp, h.scale));
                    const float tw = sigmoid(deq(data[e + 2 * h.W], h.zp, h.scale));
                    const float th = sigmoid(deq(data[e + 3 * h.W], h.zp, h.scale));
                    const float w = std::pow(2.0f * tw, 2.0f) * float(h.anchors[2 * a]) / float(image_w);
                    const float hh = std::pow(2.0f * th, 2.0f) * float(h.anchors[2 * a + 1]) / float(image_h);
                    const float xc = (tx * 2.0f - 0.5f + float(col)) / float(h.W);
                    const float yc = (ty * 2.0f - 0.5f + float(row)) / float(h.H);
                    const float x_min = xc - w / 2.0f, y_min = yc - hh / 2.0f;
                    BBox b{y_min, x_min, y_min + hh, x_min + w, 0};
                    for (uint32_t c = 0; c < nc; c++) {
                        b.score = sigmoid(deq(data[e + (5 + c) * h.W], h.zp, h.scale)) * obj;
                        if (b.score >= score_th) {
                            Detection d;
                            d.class_id = c;
                            d.coefficients.resize(MASKS);
                            for (uint32_t k = 0; k < MASKS; k++)
                                d.coefficients[k] = deq(data[e + (5 + nc + k) * h.W], h.zp, h.scale) * obj;
                            d.bbox = b;
                            const uint32_t bw = uint32_t(std::ceil((b.x_max - b.x_min) * float(image_w)));
                            const uint32_t bh = uint32_t(std::ceil((b.y_max - b.y_min) * float(image_h)));
                            d.with_mask = {b.y_min, b.x_min, b.y_max, b.x_max, b.score, uint16_t(c), uint64_t(bw * bh), nullptr};
                            detections.push_back(std::move(d));
                        }
                    }
                }
    }

    static float iou(const BBox& a, const BBox& b) {  // NmsPostProcessOp::compute_iou
        const float w = std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min);
        const float h = std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min);
        if (w <= 0.0f || h <= 0.0f) return 0.0f;
        const float inter = w * h;
        const float a1 = (a.y_max - a.y_min) * (a.x_max - a.x_min), a2 = (b.y_max - b.y_min) * (b.x_max - b.x_min);
        return inter / (a1 + a2 - inter);
    }

    void nms() {  // remove_overlapping_boxes
        std::sort(detections.begin(), detections.end(), [](Detection a, Detection b) { return a.bbox.score > b.bbox.score; });
        for (size_t i = 0; i < detections.size(); i++) {
            if (detections[i].bbox.score == REMOVED) continue;
            for (size_t j = i + 1; j < detections.size(); j++) {
                if (detections[j].bbox.score == REMOVED) continue;
                if (detections[i].class_id == detections[j].class_id && iou(detections[i].bbox, detections[j].bbox) >= iou_th)
                    detections[j].bbox.score = REMOVED;
            }
        }
    }

    template <typename Src>
    void transform_proto() {  // transform__d2h_NHCW_to_NCHW_with_dequantize
        const Src* src = reinterpret_cast<const Src*>(proto.bytes.data());
        for (uint32_t r = 0; r < proto.H; r++)
            for (uint32_t c = 0; c < MASKS; c++)
                for (uint32_t x = 0; x < proto.W; x++)
                    transformed_proto[proto.W * proto.H * c + proto.W * r + x] =
                        deq(src[MASKS * proto.W * r + proto.W * c + x], proto.zp, proto.scale);
    }

    void mult_mask_vector_and_proto_matrix(const Detection& d) {  // the op's lines, as written
        const uint32_t cols = proto.H * proto.W;
        Eigen::Map<Eigen::Matrix<float, MASKS, Eigen::Dynamic, Eigen::RowMajor>> proto_layer(transformed_proto.data(), MASKS, cols);
        Eigen::Matrix<float, MASKS, 1> coefficients(d.coefficients.data());
        auto mult_result = (coefficients.transpose() * proto_layer);
        Eigen::Map<Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>> result(mult_result_.data(), 1, cols);
        result = 1.0f / (1.0f + (-1 * mult_result).array().exp());
    }

    void crop_and_copy_mask(const Detection& d, uint8_t* dst_mask) {  // the op's lines, as written
        stbir_resize_float_generic(mult_result_.data(), int(proto.W), int(proto.H), 0, resized.data(), int(image_w),
                                   int(image_h), 0, 1, STBIR_ALPHA_CHANNEL_NONE, 0, STBIR_EDGE_CLAMP, STBIR_FILTER_TRIANGLE,
                                   STBIR_COLORSPACE_LINEAR, NULL);
        const float iw = float(image_w), ih = float(image_h);
        auto x_min = static_cast<uint32_t>(std::max(std::ceil(d.bbox.x_min * iw), 0.0f));
        auto x_max = static_cast<uint32_t>(std::min(std::ceil(d.bbox.x_max * iw), iw));
        auto y_min = static_cast<uint32_t>(std::max(std::ceil(d.bbox.y_min * ih), 0.0f));
        auto y_max = static_cast<uint32_t>(std::min(std::ceil(d.bbox.y_max * ih), ih));
        auto box_width = static_cast<uint32_t>(std::ceil((d.bbox.x_max - d.bbox.x_min) * iw));
        for (uint32_t i = y_min; i <= y_max; i++)
            for (uint32_t j = x_min; j <= x_max; j++) {
                const size_t image_mask_idx = size_t(i) * image_w + j;
                const size_t cropped = size_t(i - y_min) * box_width + (j - x_min);
                // (the op reads past its buffer on row H: 0 here, as in hailo-decode's writer)
                const float v = image_mask_idx < resized.size() ? resized[image_mask_idx] : 0.0f;
                if (dst_mask + cropped < buffer_end) dst_mask[cropped] = v > mask_threshold ? 1 : 0;
            }
    }

    uint8_t* buffer_end = nullptr;
    std::vector<float> mult_result_;

    void fill(uint8_t* buffer, size_t size) {  // fill_nms_with_byte_mask_format
        buffer_end = buffer + size;
        uint16_t count = 0;
        uint32_t offset = sizeof(count);
        for (Detection& d : detections) {
            if (d.bbox.score == REMOVED) continue;
            count++;
            if (count > max_total) break;
            const uint32_t detection_size = sizeof(DetectionWithByteMask), mask_size = uint32_t(d.with_mask.mask_size);
            if (!((offset + detection_size + mask_size) < size)) break;
            d.with_mask.mask = buffer + offset + detection_size;
            std::memcpy(buffer + offset, &d.with_mask, detection_size);
            offset += detection_size;
            mult_mask_vector_and_proto_matrix(d);
            crop_and_copy_mask(d, buffer + offset);
            offset += mask_size;
        }
        std::memcpy(buffer, &count, 2);
    }

    void execute(uint8_t* buffer, size_t size) {
        detections.clear();
        if (proto.dtype == 0) transform_proto<uint8_t>(); else transform_proto<uint16_t>();
        for (const Head& h : heads) {
            if (h.dtype == 0) extract<uint8_t>(h); else extract<uint16_t>(h);
        }
        nms();
        fill(buffer, size);
    }
};

bool read_tensor(Head& h, uint32_t channels) {
    const size_t n = size_t(h.H) * h.W * channels * (h.dtype == 0 ? 1 : 2);
    h.bytes.resize(n);
    return std::fread(h.bytes.data(), 1, n, stdin) == n;
}

}  // namespace

int main() {
    Op op;
    uint32_t n_heads = 0;
    if (!read(op.nc) || !read(op.image_h) || !read(op.image_w) || !read(n_heads)) return 1;
    for (uint32_t i = 0; i < n_heads; ++i) {
        Head h;
        if (!read(h.H) || !read(h.W) || !read(h.A) || !read(h.dtype)) return 1;
        h.anchors.resize(2 * h.A);
        for (int& a : h.anchors)
            if (!read(a)) return 1;
        if (!read(h.zp) || !read(h.scale) || !read_tensor(h, h.A * (5 + op.nc + MASKS))) return 1;
        op.heads.push_back(std::move(h));
    }
    if (!read(op.proto.H) || !read(op.proto.W) || !read(op.proto.dtype) || !read(op.proto.zp) || !read(op.proto.scale) ||
        !read_tensor(op.proto, MASKS))
        return 1;
    uint32_t buffer_size = 0, iterations = 0;
    if (!read(op.score_th) || !read(op.iou_th) || !read(op.mask_threshold) || !read(op.max_total) || !read(buffer_size) ||
        !read(iterations))
        return 1;
    op.transformed_proto.resize(size_t(op.proto.H) * op.proto.W * MASKS);
    op.mult_result_.resize(size_t(op.proto.H) * op.proto.W);
    op.resized.resize(size_t(op.image_h) * op.image_w);
    std::vector<uint8_t> buffer(buffer_size, 0);
    timespec c0{}, c1{};
    for (uint32_t it = 0; it < iterations; ++it) {
        std::fill(buffer.begin(), buffer.end(), 0);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        const auto t0 = std::chrono::steady_clock::now();
        op.execute(buffer.data(), buffer.size());
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        const double cpu = double(c1.tv_sec - c0.tv_sec) + 1e-9 * double(c1.tv_nsec - c0.tv_nsec);
        std::fprintf(stderr, "seconds %.9f cpu %.9f\n", s, cpu);
    }
    std::fwrite(buffer.data(), 1, buffer.size(), stdout);
    return 0;
}
