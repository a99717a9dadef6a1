// The plugin's entry points, as hailofilter finds them: dlsym by plain name (C linkage), with
// TAPPAS' C++ signatures (the plugin and GStreamer's process share libstdc++). Only these are
// exported (the build hides everything else, the static core included). No exception leaves them:
// hailofilter catches none, and one would end the pipeline.
#include <new>
#include <string>

#include "abi_line.hpp"
#include "filter_state.hpp"

#define HAILO_DECODE_TAPPAS_EXPORT __attribute__((visibility("default")))

using hailo_decode::tappas::FilterState;

__BEGIN_DECLS

// hailofilter's init(config-path, function-name): the element's state, passed to every call.
HAILO_DECODE_TAPPAS_EXPORT void* init(std::string config_path, std::string function_name) {
    try {
        return new FilterState(config_path, function_name);
    } catch (...) {
        return nullptr;  // out of memory: hailofilter then calls nothing with params
    }
}

HAILO_DECODE_TAPPAS_EXPORT void free_resources(void* params) { delete static_cast<FilterState*>(params); }

// Decodes the frame's tensors into objects normalised to the network input.
HAILO_DECODE_TAPPAS_EXPORT void filter(HailoROIPtr roi, void* params) {
    if (roi && params) static_cast<FilterState*>(params)->filter(*roi, false);
}

// The same, then mapped through the ROI's scaling bbox (hailocropper's letterbox), which is cleared.
HAILO_DECODE_TAPPAS_EXPORT void filter_letterbox(HailoROIPtr roi, void* params) {
    if (roi && params) static_cast<FilterState*>(params)->filter(*roi, true);
}

// libyolov5seg_post.so's entry point (TAPPAS' instance segmentation pipelines name it): filter.
HAILO_DECODE_TAPPAS_EXPORT void yolov5seg(HailoROIPtr roi, void* params) {
    if (roi && params) static_cast<FilterState*>(params)->filter(*roi, false);
}

// The ABI line this build is for: "5.x: hailo_tensor_metadata_t" or "3.x: hailo_vstream_info_t".
HAILO_DECODE_TAPPAS_EXPORT const char* hailo_decode_tappas_abi(void) { return hailo_decode::tappas::abi_line(); }

__END_DECLS
