// HailoRT's yolov5_seg byte-mask frame (hailo_decode/yolov5_seg.hpp): the records and the fit
// rule are pack_byte_mask's; the masks are computed here for the pixels the op writes only.
// Compiled with -ffp-contract=off: every product and sum rounds as the op's x86-64 build rounds it.
#include "hailo_decode/yolov5_seg.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "anchor_seg.hpp"
#include "kernels/seg_kernels.hpp"
#include "score_threshold.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

// stb_image_resize's upsampling filter along one axis (stbir__calculate_filters with
// STBIR_FILTER_TRIANGLE, shift 0): for each output pixel its first and last input pixel and their
// weights, as stbir__calculate_sample_range_upsample and stbir__calculate_coefficients_upsample
// compute them in float (their floor in double).
struct StbAxis {
    static constexpr int kTaps = 4;
    std::vector<int> n0, n1;
    std::vector<float> coef;  // kTaps per output pixel
};

StbAxis stb_axis(int in_size, int out_size) {
    StbAxis a;
    const float scale = float(out_size) / float(in_size);  // ((float)output_w / input_w) / (s1 - s0)
    const float radius = 1.0f * scale;                   // stbir__support_one(1 / scale) * scale
    a.n0.resize(size_t(out_size));
    a.n1.resize(size_t(out_size));
    a.coef.assign(size_t(out_size) * StbAxis::kTaps, 0.0f);
    for (int n = 0; n < out_size; ++n) {
        const float centre = float(n) + 0.5f;
        const float lower = (centre - radius + 0.0f) / scale;
        const float upper = (centre + radius + 0.0f) / scale;
        const float in_centre = (centre + 0.0f) / scale;
        int first = int(std::floor(double(lower) + 0.5));
        const int last = int(std::floor(double(upper) - 0.5));
        float* c = a.coef.data() + size_t(n) * StbAxis::kTaps;
        float total = 0.0f;
        int n0 = first, n1 = last;
        for (int i = 0; i <= last - first; i++) {
            if (i >= StbAxis::kTaps) bad("stb resize: more taps than expected");
            const float in_pixel_centre = float(i + first) + 0.5f;
            const float x = float(std::fabs(double(in_centre - in_pixel_centre)));
            c[i] = x <= 1.0f ? 1 - x : 0.0f;
            if (i == 0 && !c[i]) {
                n0 = ++first;
                i--;
                continue;
            }
            total += c[i];
        }
        const float filter_scale = 1 / total;
        for (int i = 0; i <= last - first; i++) c[i] *= filter_scale;
        for (int i = last - first; i >= 0; i--) {
            if (c[i]) break;
            n1 = n0 + i - 1;
        }
        a.n0[size_t(n)] = n0;
        a.n1[size_t(n)] = n1;
    }
    return a;
}

inline int clamp_index(int k, int n) { return k < 0 ? 0 : (k >= n ? n - 1 : k); }

// float -> uint32 as the op's static_cast gives it for the values it meets (non-negative, in range).
inline uint32_t to_u32(float v) {
    if (!(v > 0.0f)) return 0;
    if (v >= 4294967040.0f) return 4294967040u;
    return uint32_t(v);
}

}  // namespace
}  // namespace detail

using namespace detail;

struct Yolov5SegFrameWriter::Impl {
    Config cfg;
    std::vector<TensorView> views;
    AnchorCoefViews coefs;
    std::vector<std::vector<size_t>> obj_offset;  // per head, per anchor
    int entry = 0;
    int ph = 0, pw = 0, H = 0, W = 0, nm = 0;
    StbAxis h_axis, v_axis;
    // Per call, reused: the records' inputs, the masks' sigmoid window and horizontal rows.
    std::vector<float> boxes, crops, scores, coef;
    std::vector<int32_t> classes;
    std::vector<MaskWindow> windows;
    std::vector<float> sig, hrows, tile, neg_coef;
    std::vector<const float*> v_rows;  // a vertical tap's horizontal row
    std::vector<float> proto_lut;  // uint8 prototype, one quantization: the float of each code
    bool fast_u8 = false;          // and its 32 channels side by side (the cells_u8 kernel)
    // The horizontal pass in blocks of 8 output columns (the last padded with copies of column
    // W - 1); h_last[b]: the largest input column block b reads.
    std::vector<kernels::SegHBlock> h_blocks;
    std::vector<int> h_last;
    std::vector<uint8_t> bits, wrap, headers;
    std::vector<size_t> mask_at;

    float proto_value(const void* frame, int r, int c, int k) const {
        const TensorView& p = views[size_t(cfg.proto_output)];
        const size_t at = p.cell(r, c) + p.channel_offset[size_t(k)];
        switch (p.dtype) {
            case DType::U8: return dequantize(float(static_cast<const uint8_t*>(frame)[at]), p.zp[size_t(k)], p.scale[size_t(k)]);
            case DType::U16: return dequantize(float(static_cast<const uint16_t*>(frame)[at]), p.zp[size_t(k)], p.scale[size_t(k)]);
            case DType::F32: return static_cast<const float*>(frame)[at];
        }
        return 0.0f;
    }
    // The op's value at pixels [ylo, yhi] x [xlo, xhi] (inside the image) > threshold, into out
    // (row-major, xhi - xlo + 1 a row).
    void render(const void* proto, int ylo, int yhi, int xlo, int xhi, float cut, std::vector<uint8_t>& out);
};

Yolov5SegFrameWriter::Yolov5SegFrameWriter(const Config& cfg) : impl_(new Impl) {
    Impl& m = *impl_;
    m.cfg = cfg;
    if (cfg.kind != HeadKind::YOLOV5 || cfg.proto_output < 0 || size_t(cfg.proto_output) >= cfg.outputs.size())
        bad("the yolov5_seg byte-mask frame needs YOLOv5/YOLOv7-seg heads (anchor heads and a prototype output)");
    for (const TensorSpec& t : m.cfg.outputs) m.views.push_back(make_tensor_view(t));
    const TensorView& proto = m.views[size_t(cfg.proto_output)];
    const Settings& s = cfg.settings;
    if (proto.channels != 32)
        bad("output '" + proto.spec->name + "': HailoRT's yolov5_seg op multiplies 32 mask coefficients, the prototype has " +
            std::to_string(proto.channels) + " channels");
    if (!s.normalized || !s.yxyx) bad("the yolov5_seg byte-mask frame needs box_format 'yxyx_normalized' (the op's records)");
    if (s.max_per_class >= 0 || s.max_total >= 0)
        bad("the yolov5_seg byte-mask frame needs a decoder without max_per_class and max_total (the frame applies max_total)");
    m.ph = proto.height;
    m.pw = proto.width;
    m.H = s.image_height;
    m.W = s.image_width;
    if (m.H <= m.ph || m.W <= m.pw)
        bad("output '" + proto.spec->name + "': the input (" + std::to_string(m.H) + ", " + std::to_string(m.W) +
            ") must be larger than the prototype grid (" + std::to_string(m.ph) + ", " + std::to_string(m.pw) +
            ") on both axes (the op's stb resize upsamples)");
    m.nm = 32;
    m.entry = 5 + cfg.num_classes + m.nm;
    m.coefs = make_anchor_coef_views(m.cfg, m.views);
    for (const HeadSpec& h : cfg.heads) {
        const TensorView& v = m.views[size_t(h.box_output)];
        const int anchors = int(h.anchors.size() / 2);
        if (v.channels != anchors * m.entry)
            bad("output '" + v.spec->name + "': channels must be anchors x (5 + classes + 32) = " + std::to_string(anchors * m.entry) +
                ", got " + std::to_string(v.channels));
        m.obj_offset.emplace_back();
        for (int a = 0; a < anchors; ++a) m.obj_offset.back().push_back(v.channel_offset[size_t(a * m.entry + 4)]);
    }
    m.h_axis = stb_axis(m.pw, m.W);
    m.v_axis = stb_axis(m.ph, m.H);
    if (proto.dtype == DType::U8 && proto.per_tensor_quant)  // each code's (q - zp) * scale, as computed
        for (int q = 0; q < 256; ++q) m.proto_lut.push_back(dequantize(float(q), proto.zp[0], proto.scale[0]));
    m.fast_u8 = !m.proto_lut.empty() && proto.contiguous_channels;
    constexpr int B = kernels::kSegBlock;
    static_assert(StbAxis::kTaps == kernels::kSegTaps, "stb's taps are the kernels' taps");
    for (int x0 = 0; x0 < m.W; x0 += B) {
        kernels::SegHBlock blk{};
        int lo = m.pw, hi = 0;
        for (int j = 0; j < B; ++j) {  // the block's input columns (clamped, as stb's edge clamp reads them)
            const int x = std::min(x0 + j, m.W - 1);
            lo = std::min(lo, clamp_index(m.h_axis.n0[size_t(x)], m.pw));
            hi = std::max(hi, clamp_index(m.h_axis.n1[size_t(x)], m.pw));
            blk.taps = std::max(blk.taps, m.h_axis.n1[size_t(x)] - m.h_axis.n0[size_t(x)] + 1);
        }
        blk.first = lo;
        for (int j = 0; j < B; ++j) {
            const int x = std::min(x0 + j, m.W - 1);
            const int n0 = m.h_axis.n0[size_t(x)], n1 = m.h_axis.n1[size_t(x)];
            for (int k = 0; k < StbAxis::kTaps; ++k) {
                blk.idx[k][j] = clamp_index(std::min(n0 + k, n1), m.pw) - lo;
                blk.coef[k][j] = k <= n1 - n0 ? m.h_axis.coef[size_t(x) * StbAxis::kTaps + size_t(k)] : 0.0f;
            }
        }
        blk.span = hi - lo + 1;
        m.h_blocks.push_back(blk);
        m.h_last.push_back(hi);
    }
}

Yolov5SegFrameWriter::~Yolov5SegFrameWriter() = default;

void Yolov5SegFrameWriter::Impl::render(const void* proto, int ylo, int yhi, int xlo, int xhi, float cut,
                                        std::vector<uint8_t>& bits) {
    constexpr int T = StbAxis::kTaps, B = kernels::kSegBlock;
    const kernels::SegTable& K = kernels::seg_active();
    // Whole blocks of 8 output columns around [xlo, xhi], and the proto cells they read.
    const size_t b0 = size_t(xlo / B), b1 = size_t(xhi / B) + 1, nxa = (b1 - b0) * B;
    const int r_lo = clamp_index(v_axis.n0[size_t(ylo)], ph), r_hi = clamp_index(v_axis.n1[size_t(yhi)], ph);
    const int c_lo = h_blocks[b0].first, c_hi = h_last[b1 - 1];
    const int rows = r_hi - r_lo + 1, cols = c_hi - c_lo + 1, nx = xhi - xlo + 1;
    const size_t ucols = size_t(cols), unx = size_t(nx);
    const size_t sig_stride = ucols + B;  // a permuting kernel reads up to 7 floats past a block's first column
    // The op's sigmoid of every proto cell the pixels read (mult_mask_vector_and_proto_matrix):
    // Eigen's gemv sums (-c_k) * p_k in k order per cell, i.e. -(logit); Eigen's pexp on the
    // packets of 4 cells, std::exp on the last H*W % 4.
    if (sig.size() < size_t(rows) * sig_stride) sig.resize(size_t(rows) * sig_stride, 0.0f);
    const TensorView& p = views[size_t(cfg.proto_output)];
    const size_t n_cells = size_t(ph) * size_t(pw), vector_end = n_cells - n_cells % 4;
    for (int r = 0; r < rows; ++r) {
        float* s = sig.data() + size_t(r) * sig_stride;
        if (fast_u8) {  // uint8, channels side by side, one quantization
            K.cells_u8(static_cast<const uint8_t*>(proto) + p.cell(r_lo + r, c_lo), ucols, p.col_stride, p.zp[0],
                       p.scale[0], neg_coef.data(), s);
        } else {
            tile.resize(size_t(nm) * ucols);
            for (int c = 0; c < cols; ++c) {  // the window row dequantized, channel-major
                const size_t cell = p.cell(r_lo + r, c_lo + c);
                if (!proto_lut.empty()) {
                    const uint8_t* q = static_cast<const uint8_t*>(proto) + cell;
                    for (int k = 0; k < nm; ++k) tile[size_t(k) * ucols + size_t(c)] = proto_lut[q[p.channel_offset[size_t(k)]]];
                } else {
                    for (int k = 0; k < nm; ++k) tile[size_t(k) * ucols + size_t(c)] = proto_value(proto, r_lo + r, c_lo + c, k);
                }
            }
            for (size_t c = 0; c < ucols; ++c) s[c] = neg_coef[0] * tile[c];
            for (int k = 1; k < nm; ++k) {
                const float nc = neg_coef[size_t(k)];
                const float* t = tile.data() + size_t(k) * ucols;
                for (size_t c = 0; c < ucols; ++c) {
                    const float prod = nc * t[c];
                    s[c] = s[c] + prod;
                }
            }
        }
        const size_t linear0 = size_t(r_lo + r) * size_t(pw) + size_t(c_lo);
        const size_t n_vec = linear0 >= vector_end ? 0 : std::min(ucols, vector_end - linear0);
        K.sigmoid(s, n_vec);
        for (size_t c = n_vec; c < ucols; ++c) s[c] = 1.0f / (1.0f + std::exp(s[c]));
    }
    // Horizontal pass over each proto row (stbir__resample_horizontal_upsample), block by block.
    if (hrows.size() < size_t(rows) * nxa) hrows.resize(size_t(rows) * nxa);
    for (int r = 0; r < rows; ++r)
        K.hpass(sig.data() + size_t(r) * sig_stride - c_lo, h_blocks.data() + b0, b1 - b0, hrows.data() + size_t(r) * nxa);
    // Vertical pass (stbir__resample_vertical_upsample) a row at a time, then the op's
    // `> mask_threshold` (as `> cut`: the same answer in float, mask_threshold.hpp's cut).
    bits.resize(size_t(yhi - ylo + 1) * unx);
    v_rows.resize(T);
    const size_t x_off = size_t(xlo) - b0 * B;
    for (int y = ylo; y <= yhi; ++y) {
        const int n0 = v_axis.n0[size_t(y)], n1 = v_axis.n1[size_t(y)];
        for (int k = n0; k <= n1; ++k)
            v_rows[size_t(k - n0)] = hrows.data() + size_t(clamp_index(k, ph) - r_lo) * nxa + x_off;
        K.vpass(v_rows.data(), v_axis.coef.data() + size_t(y) * T, n1 - n0 + 1, cut, unx,
                bits.data() + size_t(y - ylo) * unx);
    }
}

Yolov5SegFramePacked Yolov5SegFrameWriter::write(const Decoder& dec, size_t frame, const void* const* tensors,
                                                 size_t max_total, double mask_threshold, uint8_t* out, size_t out_bytes,
                                                 ByteMaskLayout layout) {
    Impl& m = *impl_;
    const size_t record = byte_mask_record_bytes(layout);  // 38, or 46 from 5.2 (mask_offset appended)
    if (layout == ByteMaskLayout::HailoRT52 && !m.cfg.settings.hailort_v5)
        bad("HailoRT 5.2's byte-mask records need the decoder of HailoRT 5.x's ops (hailort_version 5.2 or later): its "
            "candidates differ from 4.x's; this decoder follows 4.x's");
    if (max_total > 65534) bad("max_bboxes_total must be at most 65534 (the count field is a uint16), got " + std::to_string(max_total));
    const auto [dets, n] = dec.frame(frame);
    const size_t take = std::min(n, max_total);
    m.boxes.resize(4 * take);
    m.crops.assign(4 * take, 0.0f);  // empty windows: the packer writes zeros whatever the crop
    m.scores.resize(take);
    m.classes.resize(take);
    m.windows.assign(take, MaskWindow{});
    for (size_t i = 0; i < take; ++i) {
        for (int k = 0; k < 4; ++k) m.boxes[4 * i + size_t(k)] = dets[i].box[k];
        m.scores[i] = dets[i].score;
        m.classes[i] = dets[i].class_id;
    }
    // The records and the fit rule (pack_byte_mask); its masks are empty windows, all zeros, which
    // the op's own bytes then overwrite.
    const float none = 0.0f;
    const MaskGrid grid{m.ph, m.pw, m.H, m.W};
    const ByteMaskPacked packed = pack_byte_mask(m.boxes.data(), m.crops.data(), m.scores.data(), m.classes.data(), take,
                                                 m.windows.data(), &none, grid, out, out_bytes, layout);
    Yolov5SegFramePacked r;
    r.records = packed.detections;
    r.bytes = packed.bytes;
    r.truncated = packed.truncated;
    r.count = r.records + ((packed.truncated || n > max_total) ? 1 : 0);
    const uint16_t count = uint16_t(r.count);
    std::memcpy(out, &count, 2);

    const TensorView& pv = m.views[size_t(m.cfg.proto_output)];
    const void* proto = static_cast<const char*>(tensors[m.cfg.proto_output]) + frame * pv.frame_stride * dtype_size(pv.dtype);
    m.neg_coef.resize(size_t(m.nm));
    // value > mask_threshold (double, as the op compares) is value > cut in float, cut the largest
    // float not above the threshold.
    float cut = float(mask_threshold);
    if (double(cut) > mask_threshold) cut = std::nextafter(cut, -std::numeric_limits<float>::infinity());
    m.headers.resize(r.records * record);
    const float fw = float(m.W), fh = float(m.H);
    size_t offset = 2;
    std::vector<size_t>& starts = m.coefs.first;  // (names only: per head, the first coefficient view)
    // Pass 1: each record's mask pointer, and every header kept to be restored after the spills.
    std::vector<size_t>& mask_at = m.mask_at;
    mask_at.resize(r.records);
    for (size_t i = 0; i < r.records; ++i) {
        const float* b = m.boxes.data() + 4 * i;
        const ByteMaskCrop crop = byte_mask_crop(b[0], b[1], b[2], b[3], m.H, m.W);
        mask_at[i] = offset + record;
        const uint64_t ptr = uint64_t(reinterpret_cast<uintptr_t>(out + mask_at[i]));
        std::memcpy(out + offset + 30, &ptr, 8);  // (5.2's mask_offset after it: the packer's)
        std::memcpy(m.headers.data() + i * record, out + offset, record);
        offset = mask_at[i] + size_t(crop.width) * crop.height;
    }
    // Pass 2: the op's writes, mask by mask in order (a mask's spill lands where the next record and
    // mask will be written, as in the op's buffer).
    for (size_t i = 0; i < r.records; ++i) {
        const Detection& d = dets[i];
        const HeadSpec& hs = m.cfg.heads[d.head];
        const TensorView& mv = m.views[size_t(hs.box_output)];
        const int anchors = m.coefs.anchors[d.head];
        int row, col, a;
        split_anchor_cell(d.cell, anchors, mv.width, row, col, a);
        // c_k = dequantize(coef_k) * objectness (yolov5_post_process.hpp check_threshold_and_add_detection).
        const void* head_frame = static_cast<const char*>(tensors[hs.box_output]) + frame * mv.frame_stride * dtype_size(mv.dtype);
        const size_t cell = mv.cell(row, col);
        auto raw = [&](size_t at, float zp, float scale) {
            switch (mv.dtype) {
                case DType::U8: return dequantize(float(static_cast<const uint8_t*>(head_frame)[at]), zp, scale);
                case DType::U16: return dequantize(float(static_cast<const uint16_t*>(head_frame)[at]), zp, scale);
                case DType::F32: return static_cast<const float*>(head_frame)[at];
            }
            return 0.0f;
        };
        const size_t obj_ch = size_t(a * m.entry + 4);
        const bool quantized = mv.dtype != DType::F32;  // (float32 views carry no zero points or scales)
        const float obj = sigmoid(raw(cell + m.obj_offset[d.head][size_t(a)], quantized ? mv.zp[obj_ch] : 0.0f,
                                      quantized ? mv.scale[obj_ch] : 1.0f));
        const TensorView& cv = m.coefs.views[starts[d.head] + size_t(a)];
        for (int k = 0; k < m.nm; ++k)
            m.neg_coef[size_t(k)] = -(raw(cell + cv.channel_offset[size_t(k)], quantized ? cv.zp[size_t(k)] : 0.0f,
                                          quantized ? cv.scale[size_t(k)] : 1.0f) * obj);

        const float* b = m.boxes.data() + 4 * i;
        const uint32_t x0 = to_u32(std::max(std::ceil(b[1] * fw), 0.0f));
        const uint32_t x1 = to_u32(std::min(std::ceil(b[3] * fw), fw));
        const uint32_t y0 = to_u32(std::max(std::ceil(b[0] * fh), 0.0f));
        const uint32_t y1 = to_u32(std::min(std::ceil(b[2] * fh), fh));
        const uint32_t bw = to_u32(std::ceil((b[3] - b[1]) * fw));
        if (x1 < x0 || y1 < y0) continue;
        uint8_t* dst = out + mask_at[i];
        const size_t room = out_bytes - mask_at[i];  // the op writes past its buffer's end here; this stops
        // Byte (i - y0) * bw + (j - x0); rows in order, each row's columns in order (the last one
        // may land on the next row's first byte, which that row then writes again, as in the op).
        // A read past the op's H x W buffer (row H, or column W of row H - 1) is taken as the value
        // 0.0 (garbage in the op), compared as every value is: 1 when mask_threshold < 0.
        const uint8_t past = uint8_t(0.0f > cut);
        auto put = [&](uint32_t i_row, uint32_t j, const uint8_t* v, size_t n) {
            const uint64_t at = uint64_t(i_row - y0) * bw + (j - x0);
            if (at >= room) return;
            n = size_t(std::min<uint64_t>(n, room - at));
            if (v) std::memcpy(dst + at, v, n); else std::memset(dst + at, past, n);
        };
        const uint32_t W = uint32_t(m.W), H = uint32_t(m.H);
        // Pixels inside the image: rows y0 .. min(y1, H - 1), columns x0 .. min(x1, W - 1).
        const uint32_t ye = std::min(y1, H - 1), xe = std::min(x1, W - 1);
        const bool block = x0 <= xe && y0 <= ye;
        if (block) m.render(proto, int(y0), int(ye), int(x0), int(xe), cut, m.bits);
        // Column W (x1 == W) reads the next row's first pixel, (i + 1, 0); row H reads past the
        // op's buffer (the value 0.0 here).
        if (x1 == W && y0 + 1 <= std::min(y1 + 1, H - 1))
            m.render(proto, int(y0 + 1), int(std::min(y1 + 1, H - 1)), 0, 0, cut, m.wrap);
        const size_t nx = x0 <= xe ? size_t(xe - x0 + 1) : 0;  // (rows below H: block is set)
        for (uint32_t ii = y0; ii <= y1; ++ii) {
            if (nx) put(ii, x0, ii < H ? m.bits.data() + size_t(ii - y0) * nx : nullptr, nx);  // columns x0 ..= xe
            if (x1 == W && x0 <= W) put(ii, W, ii + 1 < H ? &m.wrap[size_t(ii - y0)] : &past, 1);
        }
    }
    for (size_t i = 0; i < r.records; ++i)
        std::memcpy(out + mask_at[i] - record, m.headers.data() + i * record, record);
    return r;
}

}  // namespace hailo_decode
