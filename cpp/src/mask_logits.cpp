#include "mask_logits.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/mask_kernels.hpp"

namespace hailo_decode {
namespace detail {
namespace {

bool integral_byte(float zp) { return zp >= 0.0f && zp <= 255.0f && std::floor(zp) == zp; }

template <typename T>
float read_dequantized(const TensorView& v, const void* frame, size_t at, size_t k) {
    return dequantize(float(static_cast<const T*>(frame)[at]), v.zp[k], v.scale[k]);
}

float dequantized(const TensorView& v, const void* frame, size_t at, size_t k) {
    switch (v.dtype) {
        case DType::U8: return read_dequantized<uint8_t>(v, frame, at, k);
        case DType::U16: return read_dequantized<uint16_t>(v, frame, at, k);
        case DType::F32: return static_cast<const float*>(frame)[at];
    }
    return 0.0f;
}

}  // namespace

ProtoPlan make_proto_plan(const TensorView& v) {
    ProtoPlan p;
    p.view = &v;
    if (v.dtype != DType::F32)
        for (size_t k = 0; k < v.scale.size(); ++k)
            if (!(v.scale[k] > 0.0f) || !std::isfinite(v.scale[k]) || !std::isfinite(v.zp[k]))
                throw std::invalid_argument("output '" + v.spec->name + "': prototype scale must be positive and finite, got " +
                                            std::to_string(v.scale[k]) + " (channel " + std::to_string(k) + ")");
    const bool fast_shape = v.channels == kernels::kMaskChannels && v.contiguous_channels;
    if (fast_shape && v.dtype == DType::F32) {
        p.kind = ProtoPlan::Kind::F32;
    } else if (fast_shape && v.dtype == DType::U8 && v.per_tensor_quant) {
        p.kind = ProtoPlan::Kind::U8;
        p.zp = v.zp[0];
        p.scale = v.scale[0];
        p.integer_zp = integral_byte(p.zp);
        p.zp_int = p.integer_zp ? int32_t(p.zp) : 0;
    }
    return p;
}

CoefPlan make_coef_plan(const TensorView& v) {
    CoefPlan c;
    c.view = &v;
    if (v.dtype == DType::U8 && v.per_tensor_quant && v.channels == kernels::kMaskChannels && integral_byte(v.zp[0]) &&
        v.scale[0] > 0.0f && std::isfinite(v.scale[0])) {
        c.integer = true;
        c.zp = int32_t(v.zp[0]);
        c.scale = v.scale[0];
    }
    return c;
}

bool integer_path(const ProtoPlan& proto, const CoefPlan& coef) {
    return proto.kind == ProtoPlan::Kind::U8 && proto.integer_zp && coef.integer;
}

void prepare_coefficients(const ProtoPlan& proto, const CoefPlan& coef, const float* deq, const void* coef_frame,
                          int row, int col, MaskCoefficients& out) {
    const int n = proto.view->channels;
    out.integer = integer_path(proto, coef);
    if (out.integer) {
        const TensorView& v = *coef.view;
        const uint8_t* cell = static_cast<const uint8_t*>(coef_frame) + v.cell(row, col);
        if (v.contiguous_channels) {  // the usual layout: one vectorized pass, no offset table
            for (int k = 0; k < kernels::kMaskChannels; ++k) out.q[k] = int16_t(int32_t(cell[k]) - coef.zp);
        } else {
            for (int k = 0; k < n; ++k) out.q[k] = int16_t(int32_t(cell[v.channel_offset[size_t(k)]]) - coef.zp);
        }
        out.int_scale = proto.scale * coef.scale;
        return;
    }
    out.f.resize(size_t(n));
    const float s = proto.kind == ProtoPlan::Kind::U8 ? proto.scale : 1.0f;
    for (int k = 0; k < n; ++k) out.f[size_t(k)] = proto.kind == ProtoPlan::Kind::U8 ? deq[k] * s : deq[k];
}

namespace {

void logits_only(const ProtoPlan& proto, const void* frame, const MaskCoefficients& c, const MaskWindow& w,
                 float* out, std::vector<float>& cell_scratch) {
    const TensorView& v = *proto.view;
    const kernels::MaskTable& k = kernels::mask_active();
    const size_t cols = size_t(w.cols);
    if (proto.kind == ProtoPlan::Kind::U8 && c.integer) {  // the whole window in one kernel call
        const uint8_t* cells = static_cast<const uint8_t*>(frame) + v.cell(w.row0, w.col0);
        k.window_u8i(cells, size_t(w.rows), cols, v.row_stride, v.col_stride, proto.zp_int, c.q, c.int_scale, out);
        return;
    }
    for (int r = 0; r < w.rows; ++r) {
        const size_t first = v.cell(w.row0 + r, w.col0);
        float* o = out + size_t(r) * cols;
        if (proto.kind == ProtoPlan::Kind::U8) {
            const uint8_t* cells = static_cast<const uint8_t*>(frame) + first;
            k.dot_u8f(cells, cols, v.col_stride, proto.zp, c.f.data(), o);
        } else if (proto.kind == ProtoPlan::Kind::F32) {
            k.dot_f32(static_cast<const float*>(frame) + first, cols, v.col_stride, c.f.data(), o);
        } else {
            const size_t n = size_t(v.channels);
            cell_scratch.resize(n);
            for (size_t j = 0; j < cols; ++j) {
                const size_t cell = first + j * v.col_stride;
                for (size_t ch = 0; ch < n; ++ch) cell_scratch[ch] = dequantized(v, frame, cell + v.channel_offset[ch], ch);
                if (n == size_t(kernels::kMaskChannels)) {
                    k.dot_f32(cell_scratch.data(), 1, 0, c.f.data(), o + j);
                } else {
                    float s = 0.0f;
                    for (size_t ch = 0; ch < n; ++ch) s = s + c.f[ch] * cell_scratch[ch];
                    o[j] = s;
                }
            }
        }
    }
}

}  // namespace

void window_logits(const ProtoPlan& proto, const void* frame, const MaskCoefficients& c, const MaskWindow& w,
                   float* out, uint8_t* signs, std::vector<float>& cell_scratch) {
    logits_only(proto, frame, c, w, out, cell_scratch);
    kernels::mask_active().sign_row(out, size_t(w.rows) * size_t(w.cols), signs);  // rows are contiguous
}

}  // namespace detail
}  // namespace hailo_decode
