// A test stand-in for HailoRT 4.23's `hailonet` element, without a device: it attaches recorded
// outputs to each frame exactly as hailonet does after an inference (gsthailonet.cpp's completion
// callback): per output one GstBuffer of the output's bytes carrying a GstHailoTensorMeta filled
// as tensor_metadata_from_vstream_info fills it, that buffer attached to the frame with
// gst_buffer_add_parent_buffer_meta, then unreferenced. The meta code is HailoRT's own
// (../shared/tappas/5.1/hailort-gst/tensor_meta.{hpp,cpp}).
//
// hef-path names the recording (the text description tests/tappas/plugin_host.py's write_frames
// writes, cpp/tappas/tests/host.cpp's format) in place of a HEF: frame i of the stream gets
// recorded frame i modulo the frame count. output-format-type=HAILO_FORMAT_TYPE_FLOAT32 hands the
// UINT8/UINT16 outputs dequantized to float32 ((q - zp) * scale) while the metadata still says the
// HEF's type, as hailonet does; NMS outputs are float32 already. Frames are video/x-raw RGB of
// width x height (the HEF's input, 640x640 unless set). A threshold set on a recording without an
// NMS output is refused as hailonet refuses it.
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor_meta.hpp"

namespace {

struct Output {
    hailo_tensor_metadata_t meta{};
    size_t bytes_per_frame = 0;
    std::vector<uint8_t> data;  // every frame's bytes, back to back
};

struct Recording {
    std::vector<Output> outputs;
    size_t frames = 0;
};

HailoTensorFormatType type_of(const std::string& s) {
    if (s == "AUTO") return HailoTensorFormatType::HAILO_FORMAT_TYPE_AUTO;
    if (s == "UINT8") return HailoTensorFormatType::HAILO_FORMAT_TYPE_UINT8;
    if (s == "UINT16") return HailoTensorFormatType::HAILO_FORMAT_TYPE_UINT16;
    if (s == "FLOAT32") return HailoTensorFormatType::HAILO_FORMAT_TYPE_FLOAT32;
    throw std::runtime_error("unknown type " + s);
}

Recording read_recording(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    Recording r;
    std::string word;
    size_t n = 0;
    in >> word >> n;
    if (word != "outputs") throw std::runtime_error(path + ": expected 'outputs N'");
    std::vector<std::string> files(n);
    for (size_t i = 0; i < n; ++i) {
        Output o;
        std::string name, type, zp, scale;
        uint32_t h = 0, w = 0, c = 0, classes = 0, mpc = 0;
        int nms = 0;
        in >> name >> h >> w >> c >> type >> zp >> scale >> nms >> classes >> mpc >> o.bytes_per_frame >> files[i];
        if (!in || name.size() >= HAILO_MAX_STREAM_NAME_SIZE) throw std::runtime_error(path + ": bad output line");
        std::memcpy(o.meta.name, name.c_str(), name.size() + 1);
        o.meta.format.type = type_of(type);
        o.meta.format.is_nms = nms != 0;
        if (o.meta.format.is_nms) {
            o.meta.nms_shape.number_of_classes = classes;
            o.meta.nms_shape.max_bboxes_per_class = mpc;
            o.meta.nms_shape.max_bboxes_total = classes * mpc;
            o.meta.nms_shape.max_accumulated_mask_size = 0;
        } else {
            o.meta.shape.height = h;
            o.meta.shape.width = w;
            o.meta.shape.features = c;
        }
        o.meta.quant_info.qp_zp = std::strtof(zp.c_str(), nullptr);
        o.meta.quant_info.qp_scale = std::strtof(scale.c_str(), nullptr);
        o.meta.quant_info.limvals_min = 0;
        o.meta.quant_info.limvals_max = 0;
        r.outputs.push_back(std::move(o));
    }
    in >> word >> r.frames;
    if (word != "frames" || !in || r.frames == 0) throw std::runtime_error(path + ": expected 'frames F'");
    for (size_t i = 0; i < n; ++i) {
        Output& o = r.outputs[i];
        o.data.resize(o.bytes_per_frame * r.frames);
        std::ifstream data(files[i], std::ios::binary);
        if (!data.read(reinterpret_cast<char*>(o.data.data()), std::streamsize(o.data.size())))
            throw std::runtime_error("cannot read " + std::to_string(o.data.size()) + " bytes from " + files[i]);
    }
    return r;
}

// What hailonet's output vstream hands over for one output of one frame.
GstBuffer* output_buffer(const Output& o, size_t frame, bool as_float32) {
    const uint8_t* at = o.data.data() + frame * o.bytes_per_frame;
    const auto type = o.meta.format.type;
    const bool dequantize = as_float32 && !o.meta.format.is_nms &&
                            (type == HailoTensorFormatType::HAILO_FORMAT_TYPE_UINT8 ||
                             type == HailoTensorFormatType::HAILO_FORMAT_TYPE_UINT16);
    GstBuffer* buffer = nullptr;
    if (!dequantize) {
        buffer = gst_buffer_new_allocate(nullptr, o.bytes_per_frame, nullptr);
        gst_buffer_fill(buffer, 0, at, o.bytes_per_frame);
    } else {
        const bool u16 = type == HailoTensorFormatType::HAILO_FORMAT_TYPE_UINT16;
        const size_t count = o.bytes_per_frame / (u16 ? 2 : 1);
        std::vector<float> values(count);
        const float zp = o.meta.quant_info.qp_zp, scale = o.meta.quant_info.qp_scale;
        for (size_t i = 0; i < count; ++i) {
            float q = 0;
            if (u16) {
                uint16_t v;
                std::memcpy(&v, at + 2 * i, 2);
                q = float(v);
            } else {
                q = float(at[i]);
            }
            values[i] = (q - zp) * scale;
        }
        buffer = gst_buffer_new_allocate(nullptr, count * sizeof(float), nullptr);
        gst_buffer_fill(buffer, 0, values.data(), count * sizeof(float));
    }
    GstHailoTensorMeta* meta = GST_TENSOR_META_ADD(buffer);
    meta->info = o.meta;  // the HEF's type even when the data are float32, as hailonet's metadata
    return buffer;
}

}  // namespace

G_BEGIN_DECLS
#define GST_TYPE_HAILONET_STANDIN (gst_hailonet_standin_get_type())
G_DECLARE_FINAL_TYPE(GstHailoNetStandin, gst_hailonet_standin, GST, HAILONET_STANDIN, GstBaseTransform)
G_END_DECLS

struct _GstHailoNetStandin {
    GstBaseTransform parent;
    gchar* hef_path;
    guint batch_size;
    gint output_format_type;
    gboolean force_writable;
    gfloat nms_score_threshold;
    gfloat nms_iou_threshold;
    guint width;
    guint height;
    Recording* recording;
    guint64 frame;
};

G_DEFINE_TYPE(GstHailoNetStandin, gst_hailonet_standin, GST_TYPE_BASE_TRANSFORM)

enum {
    PROP_0,
    PROP_HEF_PATH,
    PROP_BATCH_SIZE,
    PROP_OUTPUT_FORMAT_TYPE,
    PROP_FORCE_WRITABLE,
    PROP_NMS_SCORE_THRESHOLD,
    PROP_NMS_IOU_THRESHOLD,
    PROP_WIDTH,
    PROP_HEIGHT,
};

// hailonet's GstHailoFormatType: the same values and nicks, so pipelines name them as for hailonet.
static GType format_type_get_type() {
    static GType type = 0;
    if (!type) {
        static const GEnumValue values[] = {
            {0, "Chosen automatically to match the format expected by the device.", "HAILO_FORMAT_TYPE_AUTO"},
            {1, "Data format type uint8_t - 1 byte per item, host/device side", "HAILO_FORMAT_TYPE_UINT8"},
            {2, "Data format type uint16_t - 2 bytes per item, host/device side", "HAILO_FORMAT_TYPE_UINT16"},
            {3, "Data format type float32_t - used only on host side", "HAILO_FORMAT_TYPE_FLOAT32"},
            {0, nullptr, nullptr},
        };
        type = g_enum_register_static("GstHailoStandinFormatType", values);
    }
    return type;
}

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE("RGB")));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE("RGB")));

static void set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
    auto* self = GST_HAILONET_STANDIN(object);
    switch (id) {
        case PROP_HEF_PATH:
            g_free(self->hef_path);
            self->hef_path = g_value_dup_string(value);
            break;
        case PROP_BATCH_SIZE: self->batch_size = g_value_get_uint(value); break;
        case PROP_OUTPUT_FORMAT_TYPE: self->output_format_type = g_value_get_enum(value); break;
        case PROP_FORCE_WRITABLE: self->force_writable = g_value_get_boolean(value); break;
        case PROP_NMS_SCORE_THRESHOLD: self->nms_score_threshold = g_value_get_float(value); break;
        case PROP_NMS_IOU_THRESHOLD: self->nms_iou_threshold = g_value_get_float(value); break;
        case PROP_WIDTH: self->width = g_value_get_uint(value); break;
        case PROP_HEIGHT: self->height = g_value_get_uint(value); break;
        default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
    auto* self = GST_HAILONET_STANDIN(object);
    switch (id) {
        case PROP_HEF_PATH: g_value_set_string(value, self->hef_path); break;
        case PROP_BATCH_SIZE: g_value_set_uint(value, self->batch_size); break;
        case PROP_OUTPUT_FORMAT_TYPE: g_value_set_enum(value, self->output_format_type); break;
        case PROP_FORCE_WRITABLE: g_value_set_boolean(value, self->force_writable); break;
        case PROP_NMS_SCORE_THRESHOLD: g_value_set_float(value, self->nms_score_threshold); break;
        case PROP_NMS_IOU_THRESHOLD: g_value_set_float(value, self->nms_iou_threshold); break;
        case PROP_WIDTH: g_value_set_uint(value, self->width); break;
        case PROP_HEIGHT: g_value_set_uint(value, self->height); break;
        default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

// The HEF's input: RGB of width x height only.
static GstCaps* transform_caps(GstBaseTransform* base, GstPadDirection, GstCaps* caps, GstCaps* filter) {
    auto* self = GST_HAILONET_STANDIN(base);
    GstCaps* input = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "RGB", "width", G_TYPE_INT,
                                         int(self->width), "height", G_TYPE_INT, int(self->height), nullptr);
    GstCaps* result = gst_caps_intersect(caps, input);
    gst_caps_unref(input);
    if (filter) {
        GstCaps* filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(result);
        result = filtered;
    }
    return result;
}

static gboolean start(GstBaseTransform* base) {
    auto* self = GST_HAILONET_STANDIN(base);
    if (!self->hef_path) {
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("hef-path is not set"), (nullptr));
        return FALSE;
    }
    try {
        auto* r = new Recording(read_recording(self->hef_path));
        delete self->recording;
        self->recording = r;
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ, ("%s", e.what()), (nullptr));
        return FALSE;
    }
    bool has_nms = false;
    for (const Output& o : self->recording->outputs) has_nms = has_nms || o.meta.format.is_nms;
    if (!has_nms && (self->nms_score_threshold != 0 || self->nms_iou_threshold != 0)) {
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                          ("NMS score threshold is set, but there is no NMS output in this model."), (nullptr));
        return FALSE;
    }
    self->frame = 0;
    return TRUE;
}

static gboolean stop(GstBaseTransform* base) {
    auto* self = GST_HAILONET_STANDIN(base);
    delete self->recording;
    self->recording = nullptr;
    return TRUE;
}

static GstFlowReturn transform_ip(GstBaseTransform* base, GstBuffer* frame_buffer) {
    auto* self = GST_HAILONET_STANDIN(base);
    const Recording& r = *self->recording;
    const size_t frame = size_t(self->frame++ % r.frames);
    const bool as_float32 = self->output_format_type == 3;
    for (const Output& o : r.outputs) {
        GstBuffer* out = output_buffer(o, frame, as_float32);
        (void)gst_buffer_add_parent_buffer_meta(frame_buffer, out);
        gst_buffer_unref(out);
    }
    return GST_FLOW_OK;
}

static void finalize(GObject* object) {
    auto* self = GST_HAILONET_STANDIN(object);
    g_free(self->hef_path);
    delete self->recording;
    G_OBJECT_CLASS(gst_hailonet_standin_parent_class)->finalize(object);
}

static void gst_hailonet_standin_class_init(GstHailoNetStandinClass* klass) {
    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass* base_class = GST_BASE_TRANSFORM_CLASS(klass);
    gobject_class->set_property = set_property;
    gobject_class->get_property = get_property;
    gobject_class->finalize = finalize;
    const auto rw = GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_property(gobject_class, PROP_HEF_PATH,
        g_param_spec_string("hef-path", "Recording", "The recorded outputs' description (in place of a HEF)",
                            nullptr, rw));
    g_object_class_install_property(gobject_class, PROP_BATCH_SIZE,
        g_param_spec_uint("batch-size", "Inference Batch", "Accepted as hailonet's, not used", 0, 16, 0, rw));
    g_object_class_install_property(gobject_class, PROP_OUTPUT_FORMAT_TYPE,
        g_param_spec_enum("output-format-type", "Output Format Type", "hailonet's output-format-type",
                          format_type_get_type(), 0, rw));
    g_object_class_install_property(gobject_class, PROP_FORCE_WRITABLE,
        g_param_spec_boolean("force-writable", "Force writable", "Accepted as hailonet's", FALSE, rw));
    g_object_class_install_property(gobject_class, PROP_NMS_SCORE_THRESHOLD,
        g_param_spec_float("nms-score-threshold", "NMS score threshold", "Refused without an NMS output, as hailonet",
                           0, 1, 0, rw));
    g_object_class_install_property(gobject_class, PROP_NMS_IOU_THRESHOLD,
        g_param_spec_float("nms-iou-threshold", "NMS IoU threshold", "Refused without an NMS output, as hailonet",
                           0, 1, 0, rw));
    g_object_class_install_property(gobject_class, PROP_WIDTH,
        g_param_spec_uint("width", "Input width", "The HEF's input width (stand-in only)", 1, 8192, 640, rw));
    g_object_class_install_property(gobject_class, PROP_HEIGHT,
        g_param_spec_uint("height", "Input height", "The HEF's input height (stand-in only)", 1, 8192, 640, rw));
    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(element_class, "hailonet stand-in", "Hailo/Network",
                                          "Attaches recorded outputs as HailoRT 4.23's hailonet attaches inferred ones",
                                          "hailo-decode tests");
    base_class->transform_caps = transform_caps;
    base_class->start = start;
    base_class->stop = stop;
    base_class->transform_ip = transform_ip;
}

static void gst_hailonet_standin_init(GstHailoNetStandin* self) {
    self->hef_path = nullptr;
    self->batch_size = 0;
    self->output_format_type = 0;
    self->force_writable = FALSE;
    self->nms_score_threshold = 0;
    self->nms_iou_threshold = 0;
    self->width = 640;
    self->height = 640;
    self->recording = nullptr;
    self->frame = 0;
    gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
}

static gboolean plugin_init(GstPlugin* plugin) {
    gst_tensor_meta_get_info();
    return gst_element_register(plugin, "hailonet", GST_RANK_NONE, GST_TYPE_HAILONET_STANDIN);
}

#define PACKAGE "hailo-decode-tests"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, hailonetstandin, "hailonet stand-in (tests)", plugin_init,
                  "0.1", "LGPL", PACKAGE, "https://github.com/")
