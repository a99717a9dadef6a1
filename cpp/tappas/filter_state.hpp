// What init() returns to hailofilter: one element's whole state (none lives in globals, so two
// elements in one process, e.g. two streams or a cascade, never share any). The Decoder is built on
// the first frame, when the tensors' shapes are known, and reused; later frames allocate nothing
// but the TAPPAS objects they add.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "abi_line.hpp"
#include "letterbox.hpp"
#include "hailo_decode/decoder.hpp"
#include "nms_tensor.hpp"
#include "plugin_config.hpp"
#include "tappas_objects.hpp"

namespace hailo_decode::tappas {

class FilterState {
public:
    // Reads the config file; a bad one is reported once (one line on stderr naming the file and the
    // key) and the element then adds nothing to any frame. Never throws.
    FilterState(const std::string& config_path, const std::string& function_name) noexcept;

    // hailofilter's call: decodes the ROI's tensors and adds the objects to it. letterbox: then maps
    // the added detections through the ROI's scaling bbox and clears it (TAPPAS' filter_letterbox).
    // Never throws; a frame that cannot be decoded gets nothing, and the reason is printed once.
    void filter(HailoROI& roi, bool letterbox) noexcept;

    bool configured() const { return config_ok_; }

    // For the host's benchmark, the core decode alone: prepare() points the Decoder the last
    // filter() built at this ROI's tensors (false when there is none or they differ from its
    // outputs); decode_prepared() then runs Decoder::decode on them, nothing else.
    bool prepare(HailoROI& roi);
    void decode_prepared();

private:
    void run(HailoROI& roi);
    bool gather(const std::vector<HailoTensorPtr>& tensors);
    void build(const std::vector<HailoTensorPtr>& tensors);
    void add_decoded();
    void add_nms(const std::vector<HailoTensorPtr>& tensors);
    // Prints `message` unless it, or another message of the same `key` (when one is given), was
    // printed before: a problem whose details change frame after frame (where a NaN sits, what a
    // count says) is named once, not once a frame.
    void report_once(const std::string& message, const std::string& key = std::string());

    std::string prefix_;  // "hailo_decode (<function>)", starts every message
    PluginConfig config_;
    bool config_ok_ = false;
    std::mutex mutex_;    // hailofilter calls one frame at a time; this keeps that true for any host

    std::unique_ptr<Decoder> decoder_;
    std::vector<TensorMeta> metas_;               // this frame's tensors' metadata
    std::vector<TensorMeta> outputs_;             // the frame's tensors the Decoder was built for, by name
    std::vector<size_t> order_;                   // the Decoder's output j is the frame's tensor order_[j]
    std::vector<TensorMeta> failed_;              // tensors no Decoder could be built for (not retried)
    bool have_failed_ = false;
    std::vector<const void*> buffers_;            // this frame's data, one per output
    std::vector<size_t> elements_;
    InputSize input_;
    PictureMap picture_;                          // this frame's picture: boxes are clipped to it
    InputSize frame_input_;                       // this frame's network input ({0, 0}: not known, NMS output)
    std::set<std::string> reported_;              // messages printed already

    DetectionPool pool_;                          // detections reused once the pipeline drops them
    std::vector<HailoDetectionPtr> added_;        // this frame's detections, until they join the ROI
    std::vector<NmsRecord> nms_records_;
    std::vector<double> nms_thresholds_;          // by class index, for an NMS op's output
    uint32_t nms_thresholds_classes_ = UINT32_MAX;  // the class count nms_thresholds_ was made for
    std::vector<uint32_t> nms_scratch_;
};

}  // namespace hailo_decode::tappas
