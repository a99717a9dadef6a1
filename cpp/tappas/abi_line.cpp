#include "abi_line.hpp"

namespace hailo_decode::tappas {

namespace {
template <typename FormatType>
ElementType element_type(FormatType t) {
    switch (static_cast<int>(t)) {
        case 0: return ElementType::Auto;  // HAILO_FORMAT_TYPE_AUTO: the same values on both lines
        case 1: return ElementType::U8;
        case 2: return ElementType::U16;
        case 3: return ElementType::F32;
        default: return ElementType::Other;
    }
}
}  // namespace

#if HAILO_DECODE_TAPPAS_LINE == 5

const char* abi_line() { return "5.x: hailo_tensor_metadata_t"; }

TensorMeta tensor_meta(HailoTensor& t) {
    TensorMeta m;
    const hailo_tensor_format_t format = t.format();
    m.type = element_type(format.type);
    m.is_nms = format.is_nms;
    if (m.is_nms) {
        const hailo_tensor_nms_shape_t s = t.nms_shape();
        m.nms_classes = s.number_of_classes;
        m.nms_max_per_class = s.max_bboxes_per_class;
    } else {
        m.height = t.height();
        m.width = t.width();
        m.features = t.features();
    }
    const hailo_tensor_quant_info_t q = t.quant_info();
    m.zp = q.qp_zp;
    m.scale = q.qp_scale;
    return m;
}

#else

const char* abi_line() { return "3.x: hailo_vstream_info_t"; }

TensorMeta tensor_meta(HailoTensor& t) {
    TensorMeta m;
    const hailo_vstream_info_t& info = t.vstream_info();
    m.type = element_type(info.format.type);
    const hailo_format_order_t order = info.format.order;
    m.is_nms = order == HAILO_FORMAT_ORDER_HAILO_NMS || order == HAILO_FORMAT_ORDER_HAILO_NMS_BY_CLASS ||
               order == HAILO_FORMAT_ORDER_HAILO_NMS_BY_SCORE || order == HAILO_FORMAT_ORDER_HAILO_NMS_WITH_BYTE_MASK ||
               order == HAILO_FORMAT_ORDER_HAILO_NMS_ON_CHIP;
    m.nms_by_class = order == HAILO_FORMAT_ORDER_HAILO_NMS || order == HAILO_FORMAT_ORDER_HAILO_NMS_BY_CLASS;
    if (m.is_nms) {
        m.nms_classes = info.nms_shape.number_of_classes;
        m.nms_max_per_class = info.nms_shape.max_bboxes_per_class;
    } else {
        m.height = info.shape.height;
        m.width = info.shape.width;
        m.features = info.shape.features;
    }
    m.zp = info.quant_info.qp_zp;
    m.scale = info.quant_info.qp_scale;
    return m;
}

#endif

}  // namespace hailo_decode::tappas
