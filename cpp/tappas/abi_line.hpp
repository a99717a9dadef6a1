// The ABI line the plugin is built for, read from the TAPPAS headers it compiles against, and what
// a HailoTensor says about itself on that line (type, NMS shape, quantization).
//
// TAPPAS 5.x builds HailoTensor from HailoRT's hailo_tensor_metadata_t (hailo_gst_tensor_metadata.hpp,
// HailoRT >= 4.22); TAPPAS <= 3.31 from hailo_vstream_info_t (hailort.h). The class layouts differ
// (sizeof 208 vs 480 bytes), so a plugin built for one line misreads every tensor of the other: one
// build per line. CMake reads the line from hailo_tensors.hpp and defines HAILO_DECODE_TAPPAS_LINE;
// the static_assert below checks it against the class itself.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "hailo_common.hpp"   // TAPPAS: __BEGIN_DECLS, hailo_common::create_flattened_bbox
#include "hailo_objects.hpp"  // TAPPAS: HailoROI, HailoDetection, ... (includes hailo_tensors.hpp)

#if !defined(HAILO_DECODE_TAPPAS_LINE)
// Built without the project's CMake: hailo_tensors.hpp included the 5.x header or it did not.
#if defined(_HAILO_GST_TENSOR_METADATA_HPP_)
#define HAILO_DECODE_TAPPAS_LINE 5
#else
#define HAILO_DECODE_TAPPAS_LINE 3
#endif
#endif

namespace hailo_decode::tappas {

// Only the 3.x HailoTensor has vstream_info(): the headers themselves say which line they are.
template <typename T, typename = void>
struct has_vstream_info : std::false_type {};
template <typename T>
struct has_vstream_info<T, std::void_t<decltype(std::declval<T&>().vstream_info())>> : std::true_type {};
static_assert(has_vstream_info<HailoTensor>::value == (HAILO_DECODE_TAPPAS_LINE == 3),
              "HAILO_DECODE_TAPPAS_LINE does not match the HailoTensor of the headers built against");

// "5.x: hailo_tensor_metadata_t" or "3.x: hailo_vstream_info_t".
const char* abi_line();

// The element type a tensor's metadata names (HailoRT's format type).
enum class ElementType : uint8_t { Auto, U8, U16, F32, Other };

// What the plugin reads of a tensor's metadata, the same on both lines.
struct TensorMeta {
    ElementType type = ElementType::Auto;
    bool is_nms = false;          // an NMS op's output: shape is the NMS shape
    bool nms_by_class = true;     // 3.x tells the NMS order; 5.x has only HAILO_NMS_BY_CLASS in hailonet
    uint32_t height = 0, width = 0, features = 0;
    uint32_t nms_classes = 0, nms_max_per_class = 0;
    float zp = 0.0f, scale = 1.0f;
};
TensorMeta tensor_meta(HailoTensor& tensor);

}  // namespace hailo_decode::tappas
