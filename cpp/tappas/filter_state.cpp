#include "filter_state.hpp"

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "hailo_decode/setup.hpp"
#include "letterbox.hpp"
#include "roi_objects.hpp"
#include "tensor_specs.hpp"

namespace hailo_decode::tappas {

namespace {

// Bitwise, so that a NaN in the metadata compares equal to itself frame after frame.
bool same_meta(const TensorMeta& a, const TensorMeta& b) {
    return a.type == b.type && a.is_nms == b.is_nms && a.height == b.height && a.width == b.width &&
           a.features == b.features && std::memcmp(&a.zp, &b.zp, sizeof a.zp) == 0 &&
           std::memcmp(&a.scale, &b.scale, sizeof a.scale) == 0;
}

const char* type_name(ElementType t) {
    switch (t) {
        case ElementType::Auto: return "AUTO";
        case ElementType::U8: return "UINT8";
        case ElementType::U16: return "UINT16";
        case ElementType::F32: return "FLOAT32";
        case ElementType::Other: break;
    }
    return "?";
}

// "name HxWxC UINT8, ..." for messages.
std::string describe(const std::vector<HailoTensorPtr>& tensors) {
    std::string text;
    for (const HailoTensorPtr& t : tensors) {
        const TensorMeta m = tensor_meta(*t);
        if (!text.empty()) text += ", ";
        text += t->name() + " " + std::to_string(m.height) + "x" + std::to_string(m.width) + "x" +
                std::to_string(m.features) + " " + type_name(m.type);
    }
    return text;
}

}  // namespace

FilterState::FilterState(const std::string& config_path, const std::string& function_name) noexcept {
    try {
        prefix_ = "hailo_decode (" + function_name + ")";
        if (function_name != "filter" && function_name != "filter_letterbox" && function_name != "yolov5seg")
            report_once("function-name " + function_name +
                        " is not one of this plugin's functions (filter, filter_letterbox, yolov5seg): hailofilter will "
                        "not find it");
        config_ = read_plugin_config(config_path, function_name);
        config_ok_ = true;
        if (!config_.notice.empty()) report_once(config_.notice);
    } catch (const std::exception& e) {
        report_once(std::string(e.what()) + " (this element adds nothing to any frame)");
    } catch (...) {
        report_once("the config file could not be read (this element adds nothing to any frame)");
    }
}

void FilterState::report_once(const std::string& message, const std::string& key) {
    try {
        if (!key.empty() && !reported_.insert("\x01" + key).second) return;
        if (!reported_.insert(message).second) return;
        std::string line = message;
        for (char& c : line)
            if (c == '\n' || c == '\r') c = ' ';
        std::fprintf(stderr, "%s: %s\n", prefix_.empty() ? "hailo_decode" : prefix_.c_str(), line.c_str());
        std::fflush(stderr);
    } catch (...) {
    }
}

void FilterState::filter(HailoROI& roi, bool letterbox) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        added_.clear();
        pool_.begin_frame();
        picture_ = picture_map(roi, letterbox);
        frame_input_ = InputSize{};
        try {
            if (config_ok_) run(roi);
        } catch (const std::exception& e) {
            added_.clear();
            // The decode's checks name where the frame went wrong (a NaN's cell), which differs
            // from frame to frame: said once.
            report_once(std::string(e.what()) + " (such frames get nothing; later ones are not reported)", "frame");
        }
        // Mapped and checked before they join the ROI, so that they can be moved into it; the
        // scaling bbox is cleared whatever happened, as TAPPAS' letterbox filters clear it.
        fit_to_picture(picture_, frame_input_, added_);
        if (letterbox) roi.clear_scaling_bbox();
        add_detections(roi, added_);
    } catch (const std::exception& e) {
        report_once(e.what());
    } catch (...) {
        report_once("unexpected error (the frame gets nothing)");
    }
}

void FilterState::run(HailoROI& roi) {
    const std::vector<HailoTensorPtr> tensors = roi.get_tensors();  // by name: std::map's order
    if (tensors.empty()) return;
    metas_.clear();
    for (const HailoTensorPtr& t : tensors) metas_.push_back(tensor_meta(*t));
    for (const TensorMeta& m : metas_)
        if (m.is_nms) {
            add_nms(tensors);
            return;
        }
    if (!gather(tensors)) {
        if (have_failed_ && failed_.size() == metas_.size() &&
            std::equal(failed_.begin(), failed_.end(), metas_.begin(), same_meta))
            return;  // already reported
        build(tensors);
        if (!decoder_ || !gather(tensors)) return;
    }
    decoder_->decode(buffers_.data(), elements_.data(), 1);
    frame_input_ = input_;
    add_decoded();
}

// metas_ holds this frame's tensors' metadata.
bool FilterState::gather(const std::vector<HailoTensorPtr>& tensors) {
    if (!decoder_ || metas_.size() != outputs_.size() || tensors.size() != outputs_.size()) return false;
    if (!std::equal(outputs_.begin(), outputs_.end(), metas_.begin(), same_meta)) return false;
    for (size_t j = 0; j < order_.size(); ++j) buffers_[j] = tensors[order_[j]]->data();
    return true;
}

void FilterState::build(const std::vector<HailoTensorPtr>& tensors) {
    decoder_.reset();
    outputs_.clear();
    order_.clear();
    have_failed_ = false;
    const std::vector<TensorMeta> metas = metas_;
    std::vector<std::string> names;
    for (const HailoTensorPtr& t : tensors) names.push_back(t->name());
    try {
        std::vector<TensorSpec> specs;
        std::vector<setup::OutputShape> shapes;
        for (size_t i = 0; i < tensors.size(); ++i) {
            specs.push_back(tensor_spec(names[i], metas[i], config_.output_format));
            shapes.push_back(output_shape(names[i], metas[i]));
        }
        setup::Options options = config_.options;
        std::optional<setup::NmsJson> nms_json;
        std::optional<std::vector<setup::NamedHead>> heads;
        if (config_.nms_json) {
            nms_json = setup::read_nms_json(*config_.nms_json, shapes, config_.nms_json_where);
            options = resolve_options(config_, &nms_json->settings);
            heads = nms_json->heads;
        } else if (config_.heads) {
            if (config_.yolov5seg) setup::check_yolov5seg_outputs(*config_.yolov5seg, shapes, config_.path);
            heads = setup::read_heads(*config_.heads, "", &shapes);  // the names, now that the outputs are known
        }
        auto decoder = std::make_unique<Decoder>(setup::make_config(specs, options, heads ? &*heads : nullptr));
        // The Decoder's outputs by index; the frame's tensors by name.
        const std::vector<TensorSpec>& used = decoder->config().outputs;
        std::vector<size_t> order;
        for (const TensorSpec& spec : used) {
            size_t i = 0;
            while (i < names.size() && names[i] != spec.name) ++i;
            if (i == names.size()) throw std::invalid_argument("output " + spec.name + " is not among the tensors");
            order.push_back(i);
        }
        buffers_.assign(used.size(), nullptr);
        elements_.clear();
        for (const TensorSpec& spec : used) elements_.push_back(spec.frame_stride);
        outputs_ = metas;
        order_ = std::move(order);
        input_ = {float(decoder->config().settings.image_width), float(decoder->config().settings.image_height)};
        const int classes = decoder->config().num_classes;
        decoder_ = std::move(decoder);
        if (config_.labels_given && config_.labels.size() != size_t(classes) + 1)
            report_once(config_.path + ": labels has " + std::to_string(config_.labels.size()) +
                        " names, the model " + std::to_string(classes) + " classes: labels[0] is \"unlabeled\", class k is "
                        "labels[k + 1] (classes without a name get \"\")");
    } catch (const std::exception& e) {
        decoder_.reset();
        outputs_.clear();
        failed_ = metas;
        have_failed_ = true;
        report_once((config_.path.empty() ? std::string("no config file") : config_.path) +
                    ": the outputs do not match the settings, frames get nothing: " + e.what() + " (outputs: " +
                    describe(tensors) + ")");
    }
}

void FilterState::add_decoded() {
    const Config& cfg = decoder_->config();
    const Settings& s = cfg.settings;
    const auto [dets, n] = decoder_->frame(0);
    if (n == 0) return;
    const float* keypoints = decoder_->keypoints(0).first;
    const float* rboxes = decoder_->rboxes(0).first;
    Decoder::FrameMasks masks;
    MaskGrid grid;
    if (cfg.proto_output >= 0) {
        masks = decoder_->masks(0);
        grid = decoder_->mask_grid();
    }
    const size_t per_keypoints = 3 * size_t(cfg.num_keypoints);
    for (size_t i = 0; i < n; ++i) {
        const Detection& d = dets[i];
        NormBox box = normalized_box(d, s, input_);
        if (!clip_to_picture(box, picture_)) continue;  // nothing of it in the picture
        const int class_id = d.class_id + 1;
        HailoDetectionPtr detection = make_detection(pool_, box, class_id, config_.labels, d.score);
        // Landmarks relative to the clipped box; the mask cropped to it.
        if (keypoints)
            attach_keypoints(*detection, box, keypoints + i * per_keypoints, cfg.num_keypoints, s.normalized, input_,
                             config_.keypoint_threshold);
        if (rboxes) attach_rotated_box(*detection, box, rboxes + 5 * i, class_id, input_, config_.obb_user_meta);
        if (masks.windows && i < masks.count) {
            float xyxy[4];
            pixel_box(d, s, input_, xyxy);
            clip_pixel_box(xyxy, picture_.picture, input_);
            attach_mask(*detection, xyxy, box, masks.windows[i], masks.logits + masks.windows[i].offset, grid, class_id,
                        config_.yolov5seg ? MaskCrop::Tappas : MaskCrop::Ultralytics);
        }
        added_.push_back(std::move(detection));
    }
}

void FilterState::add_nms(const std::vector<HailoTensorPtr>& tensors) {
    nms_records_.clear();
    uint32_t classes = 0;
    for (const HailoTensorPtr& t : tensors) {
        const TensorMeta m = tensor_meta(*t);
        if (!m.is_nms) continue;
        classes = std::max(classes, m.nms_classes);
        if (!m.nms_by_class) {
            report_once(t->name() + ": an NMS output in an order other than HAILO_NMS_BY_CLASS; frames get nothing");
            return;
        }
        if (t->data() == nullptr) {
            report_once(t->name() + ": the NMS output has no data; frames get nothing");
            return;
        }
        try {
            read_nms_by_class(t->data(), m.nms_classes, m.nms_max_per_class, nms_records_);
        } catch (const std::exception& e) {
            // The count and class differ from frame to frame: said once a tensor.
            report_once(t->name() + ": " + e.what() + "; such frames get nothing", "nms " + t->name());
            return;
        }
    }
    const setup::Options& o = config_.options;
    const auto given = [&o](const char* setting) {
        return std::find(o.explicit_settings.begin(), o.explicit_settings.end(), setting) != o.explicit_settings.end();
    };
    // The op has applied its own threshold and caps; the file's are applied again only when it gives
    // them (by either name) or a classes allow-list, as libyolo_hailortpp_post.so applies its keys.
    const bool threshold = given("score_threshold") || o.has_classes;
    if (threshold && classes != nms_thresholds_classes_) {
        setup::Options by_class = o;
        if (!given("score_threshold")) by_class.score_threshold.assign(1, -std::numeric_limits<double>::infinity());
        nms_thresholds_ = setup::thresholds_per_class(by_class, int(classes));  // throws: the frame gets nothing
        nms_thresholds_classes_ = classes;
    }
    filter_nms_records(nms_records_, threshold ? &nms_thresholds_ : nullptr, given("max_total") ? o.max_total : -1,
                       nms_scratch_);
    for (const NmsRecord& r : nms_records_) {
        NormBox box{r.x_min, r.y_min, r.x_max, r.y_max};
        if (!clip_to_picture(box, picture_)) continue;
        added_.push_back(make_detection(pool_, box, r.class_index + 1, config_.labels, r.score));
    }
}

bool FilterState::prepare(HailoROI& roi) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::vector<HailoTensorPtr> tensors = roi.get_tensors();
    metas_.clear();
    for (const HailoTensorPtr& t : tensors) metas_.push_back(tensor_meta(*t));
    return gather(tensors);
}

void FilterState::decode_prepared() {
    std::lock_guard<std::mutex> lock(mutex_);
    decoder_->decode(buffers_.data(), elements_.data(), 1);
}

}  // namespace hailo_decode::tappas
