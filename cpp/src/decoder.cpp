#include "hailo_decode/decoder.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "anchor_heads.hpp"
#include "anchor_seg.hpp"
#include "dfl.hpp"
#include "gather.hpp"
#include "mask_logits.hpp"
#include "nms.hpp"
#include "rotated_box.hpp"
#include "rotated_nms.hpp"
#include "scan.hpp"
#include "ssd_heads.hpp"
#include "score_threshold.hpp"
#include "tensor_view.hpp"
#include "thread_pool.hpp"
#include "topk.hpp"

namespace hailo_decode {

using namespace detail;

size_t required_elements(const TensorSpec& spec, size_t n_frames) {
    return needed_elements(make_tensor_view(spec), n_frames);
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

// One head as end2end_rows_direct reads it: the frame's box values (uint8, one quantization) and
// the cell centres.
struct E2eHead {
    const uint8_t* box;
    size_t row_stride, col_stride;
    float zp, scale;
    uint32_t width;
    int stride;
    const float *centre_x, *centre_y;
};

// Everything one thread needs to decode a frame. It grows to the largest frame seen and stays.
// Cache-line aligned: workspaces of different threads sit side by side in one vector, and their
// vectors' end pointers change on every push_back.
struct alignas(64) Workspace {
    ScanResult scan;
    ScratchVector<Box> boxes;
    ScratchVector<Candidate> candidates;
    SortScratch sort_scratch;
    ScratchVector<uint64_t> order_keys;  // hailort_v5: one row's (class, column) keys
    std::vector<float> dfl_scratch;
    ScratchVector<CellHit> box_cells;   // cells that give a candidate, when not every cell does
    ScratchVector<size_t> box_offsets;  // one head's cells in its box tensor
    ScratchVector<float> distances;     // and their four DFL distances
    uint8_t box_bytes[64];  // one cell's box logits, gathered from layouts without contiguous channels
    NmsWorkspace nms;
    TopkWorkspace topk;                 // end-to-end selection
    std::vector<TopkHead> topk_heads;   // one per head, pointed at the frame being decoded
    ScratchVector<uint32_t> rank_box;       // end2end: the box of each stage-1 rank used
    ScratchVector<E2eHead> e2e_heads;       // end2end_rows_direct's, per head
    std::vector<Detection> results;  // detections of the frames this workspace decoded
    // Task outputs. Pose: K x 3 floats per result, beside `results`. OBB: the candidates' rotated
    // boxes (by box index), rotated NMS's scratch, and one rotated box per result.
    ScratchVector<float> keypoints;
    std::vector<float> task_scratch;  // one cell's keypoint or angle channels
    ScratchVector<RotatedBox> candidate_rboxes;
    ScratchVector<Turn> candidate_turns;
    RotatedNmsWorkspace rotated_nms;
    ScratchVector<RotatedBox> rboxes;
    const void* const* tensors = nullptr;  // the frame being decoded (for the task outputs)
    size_t frame = 0;
    // Segmentation: per result its mask window, and the frames' window logits.
    std::vector<MaskWindow> windows;
    ScratchVector<float> logits;
    ScratchVector<uint8_t> signs;  // one byte per logit: logit > 0 (the prototype-grid masks)
    std::vector<float> coef_floats;       // one detection's coefficients, dequantized
    MaskCoefficients coef;
    std::vector<float> cell_scratch;
    MaskScratch render_scratch;
};

struct FrameSlot {
    size_t workspace, start, count;
    size_t logit_start, logit_count;
};

}  // namespace

struct Decoder::Impl {
    Config cfg;
    std::vector<TensorView> views;       // one per output
    std::vector<ClassScorer> scorers;    // one per head
    std::vector<ScanPlan> plans;         // one per head
    std::vector<std::unique_ptr<kernels::ExpTable>> dfl_tables;  // one per head, null where dfl16_u8 does not apply
    std::vector<CellCentres> centres;    // one per head
    std::vector<ClassScorer> gates;      // end2end: one per head, at the lowest class threshold
    size_t total_anchors = 0;            // cells of every head
    std::unique_ptr<AnchorHeads> anchor_heads;  // HeadKind YOLOV5 / YOLOX
    std::unique_ptr<SsdHeads> ssd_heads;        // HeadKind SSD
    std::vector<Workspace> workspaces;   // one per thread
    std::vector<FrameSlot> frames;       // last decode's frames
    std::unique_ptr<ThreadPool> pool;
    bool rotated = false;                // OBB heads: angles, rotated boxes, rotated NMS
    KeypointLayout keypoint_layout;      // pose heads when count > 0
    // uint8 task outputs, per head (empty otherwise): the angle, cos and sin of every angle code;
    // the visibility (sigmoid) of every keypoint code (one zero point and scale). Each entry is
    // what the computation gives for that code, so the results are the same, without exp/cos/sin.
    struct AngleEntry {
        float angle;
        Turn turn;
    };
    std::vector<std::vector<AngleEntry>> angle_tables;
    std::vector<std::vector<float>> visibility_tables;
    // Segmentation
    bool masks = false;
    bool masks_enabled = true;       // set_masks_enabled
    bool frames_have_masks = false;  // the last decode() computed them
    ProtoPlan proto_plan;
    std::vector<CoefPlan> coef_plans;    // one per head
    MaskGrid grid;

    void validate_masks();
    // YOLOv5-seg: the coefficient views of every (head, anchor), the prototype plan and grid.
    AnchorCoefViews anchor_coefs;
    void validate_anchor_masks();
    // Windows and logits of the frame's detections ws.results[start..], dropping empty masks if asked.
    void decode_masks(const void* const* tensors, size_t frame, size_t start, Workspace& ws);
    // YOLOv5-seg (HailoRT's yolov5_seg op, YOLOv5's own NMS): coefficients times the anchor's objectness.
    void scale_by_objectness(const void* const* tensors, size_t frame, uint32_t head, int row, int col, int anchor,
                             std::vector<float>& coefficients) const;

    void validate();
    void check_finite(const TensorView& v, const void* base, size_t n_frames) const;
    void decode_frame(const void* const* tensors, size_t frame, Workspace& ws);
    // DFL heads' rows: the scan, candidates and (rotated) NMS,
    void decode_frame_nms(const void* const* tensors, size_t frame, Workspace& ws);
    // or, end to end, topk.hpp's selection instead. Both leave OBB rows' rotated boxes in ws.rboxes.
    void decode_frame_end2end(const void* const* tensors, size_t frame, Workspace& ws);
    // YOLO26's boxes (every head's box tensor uint8, one quantization, the 4 distances contiguous;
    // not OBB): each row's box is made from its anchor's 4 bytes as the rows are written, with
    // load_cell's and make_box's operations (dfl.cpp) in their order, so the same floats as
    // decode_boxes; no box list, no call per box.
    bool direct_end2end_boxes = false;
    void end2end_rows_direct(const void* const* tensors, size_t frame, Workspace& ws);
    const void* frame_of(const void* const* tensors, int output, size_t frame) const {
        const TensorView& v = views[size_t(output)];
        return static_cast<const char*>(tensors[output]) + frame * v.frame_stride * dtype_size(v.dtype);
    }
    // Candidates and boxes of the hits in ws.scan (head h), appended to the workspace's lists.
    template <typename T>
    void decode_hits(size_t h, const T* cls_frame, const void* box_frame, Workspace& ws);
    // Boxes of the n cells (DFL, then corners), appended to ws.boxes.
    void decode_boxes(size_t h, const void* box_frame, const CellHit* cells, size_t n, Workspace& ws);
    // OBB heads: each cell's angle and rotated box (ws.candidate_rboxes), and the box that encloses
    // it in output form (ws.boxes), from the n cells' distances in ws.distances.
    void make_rotated_boxes(size_t h, const void* const* tensors, size_t frame, const CellHit* cells, size_t n,
                            Workspace& ws);
    // Pose heads: the keypoints of results [first, end) of ws.results.
    void decode_keypoints_of(const void* const* tensors, size_t frame, size_t first, Workspace& ws);
    void validate_tasks();
};

void Decoder::Impl::validate_tasks() {
    // Every head or none carries each task output; each sits on its head's grid.
    size_t with_kpt = 0, with_angle = 0, with_mask = 0;
    for (const HeadSpec& h : cfg.heads) {
        with_kpt += h.kpt_output >= 0;
        with_angle += h.angle_output >= 0;
        with_mask += h.mask_output >= 0;
    }
    const size_t n_heads = cfg.heads.size();
    if (with_kpt != 0 && with_kpt != n_heads) bad("keypoint outputs: every head needs one, or none may have one");
    if (with_angle != 0 && with_angle != n_heads) bad("angle outputs: every head needs one, or none may have one");
    if (with_mask != 0 && (with_kpt != 0 || with_angle != 0))
        bad("mask coefficient outputs together with keypoint or angle outputs are not supported");
    if (cfg.keypoint_decode != KeypointDecode::YOLOV8 && cfg.keypoint_decode != KeypointDecode::YOLO26)
        bad("keypoint_decode must be YOLOV8 or YOLO26, got " + std::to_string(int(cfg.keypoint_decode)));
    if (cfg.angle_decode != AngleDecode::SIGMOID && cfg.angle_decode != AngleDecode::RAW)
        bad("angle_decode must be SIGMOID or RAW, got " + std::to_string(int(cfg.angle_decode)));
    if (cfg.num_keypoints < 0 || cfg.num_keypoints > 4096)
        bad("num_keypoints must be in [0, 4096], got " + std::to_string(cfg.num_keypoints));
    if ((cfg.num_keypoints > 0) != (with_kpt > 0))
        bad(with_kpt ? "heads have keypoint outputs but num_keypoints is 0"
                     : "num_keypoints is " + std::to_string(cfg.num_keypoints) + " but no head has a keypoint output");
    if (with_kpt && cfg.keypoint_dims != 2 && cfg.keypoint_dims != 3)
        bad("keypoint_dims must be 2 (x, y) or 3 (x, y, visibility), got " + std::to_string(cfg.keypoint_dims));
    if (!std::isfinite(cfg.settings.class_offset) || cfg.settings.class_offset < 0.0f)
        bad("class_offset must be finite and >= 0, got " + std::to_string(cfg.settings.class_offset));
    for (const HeadSpec& h : cfg.heads) {
        const TensorView& box = views[size_t(h.box_output)];
        auto check = [&](int index, const char* what, int channels, const std::string& expected) {
            if (index < 0) return;
            if (size_t(index) >= views.size()) bad(std::string(what) + " output index out of range");
            const TensorView& v = views[size_t(index)];
            if (index == h.box_output || index == h.cls_output)
                bad("output '" + v.spec->name + "' is a head's box or class output and its " + what + " output");
            if (v.height != box.height || v.width != box.width)
                bad("output '" + v.spec->name + "': " + what + " grid (" + std::to_string(v.height) + ", " +
                    std::to_string(v.width) + ") differs from its box output '" + box.spec->name + "' (" +
                    std::to_string(box.height) + ", " + std::to_string(box.width) + ")");
            if (v.channels != channels)
                bad("output '" + v.spec->name + "': " + what + " channels must be " + expected + ", got " +
                    std::to_string(v.channels));
        };
        check(h.kpt_output, "keypoint", cfg.num_keypoints * cfg.keypoint_dims,
              "num_keypoints x keypoint_dims = " + std::to_string(cfg.num_keypoints) + " x " +
                  std::to_string(cfg.keypoint_dims) + " = " + std::to_string(cfg.num_keypoints * cfg.keypoint_dims));
        check(h.angle_output, "angle", 1, "1");
    }
    rotated = with_angle > 0;
    for (const HeadSpec& h : cfg.heads) {
        angle_tables.emplace_back();
        visibility_tables.emplace_back();
        if (h.angle_output >= 0 && views[size_t(h.angle_output)].dtype == DType::U8) {
            const TensorView& v = views[size_t(h.angle_output)];
            for (int q = 0; q < 256; ++q) {
                const float a = decode_angle(dequantize(float(q), v.zp[0], v.scale[0]), cfg.angle_decode);
                angle_tables.back().push_back({a, turn_of(a)});
            }
        }
        if (h.kpt_output >= 0 && views[size_t(h.kpt_output)].dtype == DType::U8 &&
            views[size_t(h.kpt_output)].per_tensor_quant) {
            const TensorView& v = views[size_t(h.kpt_output)];
            for (int q = 0; q < 256; ++q) visibility_tables.back().push_back(sigmoid(dequantize(float(q), v.zp[0], v.scale[0])));
        }
    }
    keypoint_layout.count = with_kpt ? cfg.num_keypoints : 0;
    keypoint_layout.dims = cfg.keypoint_dims;
    keypoint_layout.decode = cfg.keypoint_decode;
    keypoint_layout.normalized = cfg.settings.normalized;
    keypoint_layout.image_width = float(cfg.settings.image_width);
    keypoint_layout.image_height = float(cfg.settings.image_height);
}

void Decoder::Impl::validate() {
    const Settings& s = cfg.settings;
    if (cfg.outputs.empty()) bad("the decoder needs at least one output");
    if (cfg.heads.empty()) bad("the decoder needs at least one head (box, class, stride)");
    if (cfg.num_classes <= 0) bad("num_classes must be positive, got " + std::to_string(cfg.num_classes));
    if (cfg.bins <= 0) bad("bins must be positive, got " + std::to_string(cfg.bins));
    if (s.image_height <= 0 || s.image_width <= 0)
        bad("image size must be positive, got (" + std::to_string(s.image_height) + ", " +
            std::to_string(s.image_width) + ")");
    if (!std::isfinite(s.iou_threshold)) bad("iou threshold must be finite, got " + std::to_string(s.iou_threshold));
    // Every head kind reads one threshold or one per class: checked before any of them indexes it.
    if (s.score_threshold.size() != 1 && s.score_threshold.size() != size_t(cfg.num_classes))
        bad("score_threshold must hold one value or one per class (" + std::to_string(cfg.num_classes) + "), got " +
            std::to_string(s.score_threshold.size()));
    views.reserve(cfg.outputs.size());
    for (const auto& o : cfg.outputs) views.push_back(make_tensor_view(o));
    if (cfg.kind == HeadKind::SSD) {  // SSD heads: their own room validates them (ssd_heads.hpp)
        if (s.end2end) bad("end2end selection is for DFL heads (YOLO26/YOLOv10), not SSD heads");
        for (const HeadSpec& h : cfg.heads)
            if (h.kpt_output >= 0 || h.angle_output >= 0 || h.mask_output >= 0 || cfg.proto_output >= 0)
                bad("keypoint, angle and mask outputs need DFL heads, not SSD heads");
        ssd_heads.reset(new SsdHeads(cfg, views));
        return;
    }
    if (cfg.kind != HeadKind::DFL) {  // anchor-based heads: their own room validates them
        if (s.end2end) bad("end2end selection is for DFL heads (YOLO26/YOLOv10), not anchor-based ones");
        // YOLOv5-seg: the coefficients lie in the head's tensor (anchor_seg.hpp), the prototype apart.
        const bool seg = cfg.kind == HeadKind::YOLOV5 && cfg.proto_output >= 0;
        for (const HeadSpec& h : cfg.heads)
            if (h.kpt_output >= 0 || h.angle_output >= 0 || (h.mask_output >= 0 && !(seg && h.mask_output == h.box_output)) ||
                (cfg.proto_output >= 0 && !seg))
                bad("keypoint and angle outputs need DFL heads, mask outputs DFL or YOLOv5 heads (YOLOv5-seg: proto_output, "
                    "the coefficients in each head's tensor)");
        if (seg && size_t(cfg.proto_output) >= views.size())
            bad("proto_output index " + std::to_string(cfg.proto_output) + " out of range");
        anchor_heads.reset(new AnchorHeads(cfg, views));
        if (seg) validate_anchor_masks();
        return;
    }
    for (const auto& h : cfg.heads) {
        if (h.box_output < 0 || size_t(h.box_output) >= views.size() || h.cls_output < 0 ||
            size_t(h.cls_output) >= views.size())
            bad("head refers to an output index out of range");
        const TensorView& box = views[size_t(h.box_output)];
        const TensorView& cls = views[size_t(h.cls_output)];
        const std::string pair = "head ('" + box.spec->name + "', '" + cls.spec->name + "')";
        if (h.stride <= 0) bad(pair + ": stride must be positive, got " + std::to_string(h.stride));
        if (box.height != cls.height || box.width != cls.width)
            bad(pair + ": box and class grids differ: (" + std::to_string(box.height) + ", " +
                std::to_string(box.width) + ") vs (" + std::to_string(cls.height) + ", " +
                std::to_string(cls.width) + ")");
        if (box.channels != 4 * cfg.bins)
            bad("output '" + box.spec->name + "': box channels must be 4 x bins = " + std::to_string(4 * cfg.bins) +
                ", got " + std::to_string(box.channels));
        if (cls.channels != cfg.num_classes)
            bad("output '" + cls.spec->name + "': class channels must be num_classes = " +
                std::to_string(cfg.num_classes) + ", got " + std::to_string(cls.channels));
        scorers.push_back(make_class_scorer(cls, s.score_threshold, s.score_inclusive, s.sigmoid));
        // HailoRT 5.x's quantized pre-filter: a raised limit, which the scan applies at no cost.
        if (s.hailort_v5 && !s.end2end) apply_hailort_prefilter(scorers.back(), cls, s.score_threshold);
        plans.push_back(make_scan_plan(cls, scorers.back()));
        dfl_tables.push_back(make_dfl_exp_table(box, cfg.bins));
        centres.push_back(make_cell_centres(box.width, box.height, h.stride, s));
        total_anchors += size_t(box.height) * size_t(box.width);
        if (s.end2end) {
            const float lowest = *std::min_element(s.score_threshold.begin(), s.score_threshold.end());
            gates.push_back(make_class_scorer(cls, {lowest}, s.score_inclusive, s.sigmoid));
        }
    }
    validate_tasks();
    validate_masks();
    direct_end2end_boxes = s.end2end && cfg.bins == 1 && !rotated;
    for (const auto& h : cfg.heads) {
        const TensorView& box = views[size_t(h.box_output)];
        direct_end2end_boxes = direct_end2end_boxes && box.dtype == DType::U8 && box.per_tensor_quant && box.contiguous_channels;
    }
}

void Decoder::Impl::validate_masks() {
    bool any_mask = cfg.proto_output >= 0;
    for (const auto& h : cfg.heads) any_mask = any_mask || h.mask_output >= 0;
    if (!any_mask) return;
    if (cfg.proto_output < 0 || size_t(cfg.proto_output) >= views.size())
        bad("mask coefficient outputs need a prototype output (proto_output), got index " + std::to_string(cfg.proto_output));
    const TensorView& proto = views[size_t(cfg.proto_output)];
    for (const auto& h : cfg.heads) {
        if (h.mask_output < 0 || size_t(h.mask_output) >= views.size())
            bad("with a prototype output every head needs a mask coefficient output; head ('" +
                views[size_t(h.box_output)].spec->name + "') has index " + std::to_string(h.mask_output));
        const TensorView& m = views[size_t(h.mask_output)];
        const TensorView& box = views[size_t(h.box_output)];
        if (m.height != box.height || m.width != box.width)
            bad("output '" + m.spec->name + "': mask coefficient grid (" + std::to_string(m.height) + ", " +
                std::to_string(m.width) + ") differs from its head's box grid (" + std::to_string(box.height) + ", " +
                std::to_string(box.width) + ")");
        if (m.channels != proto.channels)
            bad("output '" + m.spec->name + "': " + std::to_string(m.channels) +
                " mask coefficients, but prototype output '" + proto.spec->name + "' has " +
                std::to_string(proto.channels) + " channels");
        coef_plans.push_back(make_coef_plan(m));
    }
    proto_plan = make_proto_plan(proto);
    grid = MaskGrid{proto.height, proto.width, cfg.settings.image_height, cfg.settings.image_width};
    masks = true;
}

void Decoder::Impl::validate_anchor_masks() {
    anchor_coefs = make_anchor_coef_views(cfg, views);
    const TensorView& proto = views[size_t(cfg.proto_output)];
    for (const TensorView& v : anchor_coefs.views) {
        coef_plans.push_back(make_coef_plan(v));
        // HailoRT's op and YOLOv5's NMS multiply the coefficients by the objectness first: the float path.
        if (cfg.mask_objectness) coef_plans.back().integer = false;
    }
    proto_plan = make_proto_plan(proto);
    grid = MaskGrid{proto.height, proto.width, cfg.settings.image_height, cfg.settings.image_width};
    // The ultralytics preset: YOLOv5 v7.0's own process_mask (masks.hpp, MaskRule::yolov5).
    if (!cfg.settings.hailort_decode) grid.rule = MaskRule::yolov5;
    masks = true;
}

Decoder::Decoder(Config config, int threads) : impl_(new Impl) {
    if (threads < 1 || threads > 256) bad("threads must be in [1, 256], got " + std::to_string(threads));
    impl_->cfg = std::move(config);
    impl_->validate();
    impl_->workspaces.resize(size_t(threads));
    for (Workspace& ws : impl_->workspaces) {
        ws.dfl_scratch.resize(size_t(5 * impl_->cfg.bins));
        ws.task_scratch.resize(size_t(std::max(1, impl_->cfg.num_keypoints * impl_->cfg.keypoint_dims)));
        if (impl_->masks) {
            ws.coef_floats.resize(size_t(impl_->proto_plan.view->channels));
            ws.coef.f.reserve(size_t(impl_->proto_plan.view->channels));
            ws.cell_scratch.reserve(size_t(impl_->proto_plan.view->channels));
        }
        for (const ScanPlan& p : impl_->plans) reserve_scan(p, ws.scan);
        ws.topk_heads.resize(impl_->cfg.heads.size());
    }
    if (threads > 1) impl_->pool.reset(new ThreadPool(size_t(threads - 1)));
}

Decoder::~Decoder() = default;

const Config& Decoder::config() const { return impl_->cfg; }

int Decoder::threads() const { return int(impl_->workspaces.size()); }

size_t Decoder::frame_count() const { return impl_->frames.size(); }

std::pair<const Detection*, size_t> Decoder::frame(size_t index) const {
    if (index >= frame_count()) throw std::out_of_range("frame index out of range");
    const FrameSlot& f = impl_->frames[index];
    return {impl_->workspaces[f.workspace].results.data() + f.start, f.count};
}

std::pair<const float*, size_t> Decoder::keypoints(size_t index) const {
    if (index >= frame_count()) throw std::out_of_range("frame index out of range");
    if (impl_->keypoint_layout.count == 0) return {nullptr, 0};
    const FrameSlot& f = impl_->frames[index];
    if (f.count == 0) return {nullptr, 0};
    return {impl_->workspaces[f.workspace].keypoints.data() + f.start * 3 * size_t(impl_->keypoint_layout.count), f.count};
}

std::pair<const float*, size_t> Decoder::rboxes(size_t index) const {
    if (index >= frame_count()) throw std::out_of_range("frame index out of range");
    if (!impl_->rotated) return {nullptr, 0};
    const FrameSlot& f = impl_->frames[index];
    static_assert(sizeof(RotatedBox) == 5 * sizeof(float), "RotatedBox is five packed floats");
    if (f.count == 0) return {nullptr, 0};
    return {&impl_->workspaces[f.workspace].rboxes.data()[f.start].cx, f.count};
}
Decoder::FrameMasks Decoder::masks(size_t index) const {
    if (index >= frame_count()) throw std::out_of_range("frame index out of range");
    FrameMasks out;
    if (!impl_->frames_have_masks) return out;
    const FrameSlot& f = impl_->frames[index];
    const Workspace& ws = impl_->workspaces[f.workspace];
    out.windows = ws.windows.data() + f.start;
    out.count = f.count;
    out.logits = ws.logits.data() + f.logit_start;
    out.signs = ws.signs.data() + f.logit_start;
    out.logit_count = f.logit_count;
    return out;
}

MaskGrid Decoder::mask_grid() const { return impl_->grid; }

void Decoder::set_masks_enabled(bool on) { impl_->masks_enabled = on; }

void Decoder::Impl::check_finite(const TensorView& v, const void* base, size_t n_frames) const {
    // Float inputs are checked where they are read: NaN or inf would make scores and boxes garbage.
    for (size_t f = 0; f < n_frames; ++f) {
        const float* frame = frame_ptr<float>(base, v, f);
        for (int r = 0; r < v.height; ++r)
            for (int w = 0; w < v.width; ++w) {
                const float* cell = frame + v.cell(r, w);
                for (int c = 0; c < v.channels; ++c)
                    if (!std::isfinite(cell[v.channel_offset[size_t(c)]]))
                        bad("output '" + v.spec->name + "': non-finite value " +
                            std::to_string(cell[v.channel_offset[size_t(c)]]) + " at frame " + std::to_string(f) +
                            ", (row, col, channel) = (" + std::to_string(r) + ", " + std::to_string(w) + ", " +
                            std::to_string(c) + ")");
            }
    }
}

void Decoder::decode(const void* const* tensors, const size_t* buffer_elements, size_t n_frames) {
    Impl& m = *impl_;
    // Bounds first, once, before any kernel reads a byte.
    for (size_t i = 0; i < m.views.size(); ++i) {
        const TensorView& v = m.views[i];
        const size_t need = needed_elements(v, n_frames);
        if (tensors[i] == nullptr && n_frames > 0) bad("output '" + v.spec->name + "': no buffer");
        if (buffer_elements[i] < need)
            bad("output '" + v.spec->name + "': buffer holds " + std::to_string(buffer_elements[i]) +
                " elements, " + std::to_string(n_frames) + " frame(s) need " + std::to_string(need));
    }
    for (size_t i = 0; i < m.views.size(); ++i)
        if (m.views[i].dtype == DType::F32) m.check_finite(m.views[i], tensors[i], n_frames);

    m.frames.resize(n_frames);
    m.frames_have_masks = m.masks && (m.masks_enabled || m.cfg.drop_empty_masks);
    // Frames are handed out one at a time: a worker that wakes late takes fewer, none if the
    // calling thread has done them all. Each part writes to its own workspace.
    struct Batch {
        Impl& m;
        const void* const* tensors;
        size_t n_frames;
        std::atomic<size_t> next{0};
    } batch{m, tensors, n_frames};
    auto work = [&batch](size_t part) {  // one reference: small enough for std::function not to allocate
        Workspace& ws = batch.m.workspaces[part];
        ws.results.clear();
        ws.keypoints.clear();
        ws.rboxes.clear();
        ws.windows.clear();
        ws.logits.clear();
        ws.signs.clear();
        for (size_t f; (f = batch.next.fetch_add(1, std::memory_order_relaxed)) < batch.n_frames;) {
            const size_t start = ws.results.size(), logit_start = ws.logits.size();
            batch.m.decode_frame(batch.tensors, f, ws);
            if (batch.m.frames_have_masks) batch.m.decode_masks(batch.tensors, f, start, ws);
            batch.m.frames[f] = {part, start, ws.results.size() - start, logit_start, ws.logits.size() - logit_start};
        }
    };
    const size_t parts = std::min(m.workspaces.size(), n_frames);
    if (parts <= 1) {
        if (n_frames) work(0);
    } else {
        m.pool->run(parts, work);
    }
}

void Decoder::Impl::decode_frame(const void* const* tensors, size_t frame, Workspace& ws) {
    ws.boxes.clear();
    ws.candidates.clear();
    ws.candidate_rboxes.clear();
    ws.candidate_turns.clear();
    ws.tensors = tensors;
    ws.frame = frame;
    switch (cfg.kind) {
        case HeadKind::SSD:
            ssd_heads->collect(tensors, frame, ws.candidates, ws.boxes);
            sort_candidates(ws.candidates, cfg.settings.hailort_sort, ws.sort_scratch);
            suppress(ws.candidates, ws.boxes, cfg.settings, cfg.num_classes, ws.nms, ws.results);
            return;
        case HeadKind::YOLOV5:
        case HeadKind::YOLOX:
            anchor_heads->collect(tensors, frame, ws.candidates, ws.boxes);
            sort_candidates(ws.candidates, cfg.settings.hailort_sort, ws.sort_scratch);
            suppress(ws.candidates, ws.boxes, cfg.settings, cfg.num_classes, ws.nms, ws.results);
            return;
        case HeadKind::DFL:
            break;
    }
    const size_t first = ws.results.size();
    if (cfg.settings.end2end)
        decode_frame_end2end(tensors, frame, ws);
    else
        decode_frame_nms(tensors, frame, ws);
    // The kept rows' keypoints, either way (OBB rows carry their rotated boxes already; masks
    // follow in decode_masks).
    if (keypoint_layout.count > 0) decode_keypoints_of(tensors, frame, first, ws);
}

void Decoder::Impl::decode_frame_nms(const void* const* tensors, size_t frame, Workspace& ws) {
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        const HeadSpec& head = cfg.heads[h];
        const TensorView& cls = views[size_t(head.cls_output)];
        const TensorView& box = views[size_t(head.box_output)];
        const void* cls_frame = frame_of(tensors, head.cls_output, frame);
        const void* box_frame = frame_of(tensors, head.box_output, frame);
        (void)box;
        // The whole tensor is scanned, then its hits decoded. (Decoding each band of rows' hits
        // as they are found, with the next rows prefetched, was measured slower.)
        ws.scan.clear();
        scan_class_tensor(plans[h], cls, scorers[h], cls_frame, ws.scan);
        const size_t first = ws.candidates.size();
        switch (cls.dtype) {
            case DType::U8: decode_hits(h, static_cast<const uint8_t*>(cls_frame), box_frame, ws); break;
            case DType::U16: decode_hits(h, static_cast<const uint16_t*>(cls_frame), box_frame, ws); break;
            case DType::F32: decode_hits(h, static_cast<const float*>(cls_frame), box_frame, ws); break;
        }
        // HailoRT 5.0.1+ lists a row's candidates class by class (std::sort's ties follow).
        if (cfg.settings.hailort_v5)
            order_row_class_col(ws.candidates, first, ws.boxes, uint32_t(cls.width), ws.order_keys, ws.sort_scratch.sorted);
    }
    sort_candidates(ws.candidates, cfg.settings.hailort_sort, ws.sort_scratch);
    if (rotated)
        suppress_rotated(ws.candidates, ws.candidate_rboxes, ws.candidate_turns, ws.boxes, cfg.settings, cfg.num_classes, ws.rotated_nms,
                         ws.results, ws.rboxes);
    else
        suppress(ws.candidates, ws.boxes, cfg.settings, cfg.num_classes, ws.nms, ws.results);
}

void Decoder::Impl::decode_keypoints_of(const void* const* tensors, size_t frame, size_t first, Workspace& ws) {
    const size_t per = 3 * size_t(keypoint_layout.count);
    const size_t end = ws.results.size();
    ws.keypoints.resize(end * per);
    for (size_t i = first; i < end; ++i) {
        const Detection& d = ws.results[i];
        const HeadSpec& head = cfg.heads[d.head];
        const TensorView& kv = views[size_t(head.kpt_output)];
        const int row = int(d.cell / uint32_t(kv.width)), col = int(d.cell % uint32_t(kv.width));
        const std::vector<float>& lut = visibility_tables[d.head];
        decode_keypoints(kv, frame_of(tensors, head.kpt_output, frame), row, col, head.stride, keypoint_layout,
                         lut.empty() ? nullptr : lut.data(), ws.task_scratch.data(), ws.keypoints.data() + i * per);
    }
}

void Decoder::Impl::make_rotated_boxes(size_t h, const void* const* tensors, size_t frame, const CellHit* cells,
                                       size_t n, Workspace& ws) {
    const HeadSpec& head = cfg.heads[h];
    const TensorView& av = views[size_t(head.angle_output)];
    const void* angle_frame = frame_of(tensors, head.angle_output, frame);
    const float* d = ws.distances.data();
    const size_t r0 = ws.candidate_rboxes.size();
    ws.candidate_rboxes.resize(r0 + n);
    ws.candidate_turns.resize(r0 + n);
    RotatedBox* rb = ws.candidate_rboxes.data() + r0;
    Turn* turns = ws.candidate_turns.data() + r0;
    const std::vector<AngleEntry>& table = angle_tables[h];
    // The enclosing boxes (output form) are left to rotated NMS, for the survivors only.
    for (size_t i = 0; i < n; ++i) {
        float angle;
        if (!table.empty()) {  // uint8: the angle of the code, and its cos and sin
            const AngleEntry& a = table[static_cast<const uint8_t*>(angle_frame)[av.cell(cells[i].row, cells[i].col) + av.channel_offset[0]]];
            angle = a.angle;
            turns[i] = a.turn;
        } else {
            float logit;
            gather_cell(av, angle_frame, cells[i].row, cells[i].col, &logit);
            angle = decode_angle(logit, cfg.angle_decode);
            turns[i] = turn_of(angle);
        }
        rb[i] = dist2rbox(d + 4 * i, angle, turns[i], cells[i].col, cells[i].row, head.stride);
    }
}

template <typename T>
void Decoder::Impl::decode_hits(size_t h, const T* cls_frame, const void* box_frame, Workspace& ws) {
    const ScanResult& scan = ws.scan;
    const CellHit* cells = scan.cells.data();
    const size_t n_cells = scan.cells.size();
    const uint32_t box0 = uint32_t(ws.boxes.size());
    if (cfg.settings.multi_label) {
        // Every passing class is a candidate and every cell a box. The list grows once and is
        // written through a pointer (a braced temporary, or emplace_back's bookkeeping, per
        // candidate cost store-forwarding stalls).
        const size_t c0 = ws.candidates.size();
        ws.candidates.resize(c0 + scan.classes.size());
        Candidate* cand = ws.candidates.data() + c0;
        for (size_t i = 0; i < n_cells; ++i)
            for (uint32_t j = cells[i].first_class, end = j + cells[i].class_count; j < end; ++j, ++cand) {
                cand->score = scan.scores[j];
                cand->class_id = scan.classes[j];
                cand->box = box0 + uint32_t(i);
            }
        decode_boxes(h, box_frame, cells, n_cells, ws);
        return;
    }
    // Best class of each cell (first on ties), a candidate only if it passes its own threshold.
    const TensorView& cls = views[size_t(cfg.heads[h].cls_output)];
    const ClassScorer& scorer = scorers[h];
    ws.box_cells.clear();
    for (size_t i = 0; i < n_cells; ++i) {
        const CellHit& hit = cells[i];
        const size_t cell = cls.cell(hit.row, hit.col);
        auto score_of = [&](int c) { return class_score(scorer, cls, cls_frame, cell + cls.channel_offset[size_t(c)], c); };
        int best = 0;
        float best_score = score_of(0);
        for (int c = 1; c < cfg.num_classes; ++c) {
            const float v = score_of(c);
            if (v > best_score) { best = c; best_score = v; }
        }
        bool passes = false;
        for (uint32_t j = hit.first_class; j < hit.first_class + hit.class_count; ++j) passes = passes || scan.classes[j] == best;
        if (!passes) continue;
        Candidate& cand = ws.candidates.emplace_back();
        cand.score = best_score;
        cand.class_id = best;
        cand.box = box0 + uint32_t(ws.box_cells.size());
        ws.box_cells.push_back(hit);
    }
    decode_boxes(h, box_frame, ws.box_cells.data(), ws.box_cells.size(), ws);
}

void Decoder::Impl::decode_boxes(size_t h, const void* box_frame, const CellHit* cells, size_t n, Workspace& ws) {
    const Settings& s = cfg.settings;
    const HeadSpec& head = cfg.heads[h];
    const TensorView& box = views[size_t(head.box_output)];
    const kernels::ExpTable* exp_table = dfl_tables[h].get();
    const kernels::Table& k = kernels::active();
    const float* centre_x = centres[h].x.data();
    const float* centre_y = centres[h].y.data();
    const size_t b0 = ws.boxes.size();
    ws.boxes.resize(b0 + n);
    Box* out = ws.boxes.data() + b0;
    ws.distances.resize(4 * n);
    float* d = ws.distances.data();
    if (exp_table && box.contiguous_channels) {  // uint8 box logits: the table-driven kernel, one call a head
        ws.box_offsets.resize(n);
        for (size_t i = 0; i < n; ++i) ws.box_offsets[i] = box.cell(cells[i].row, cells[i].col);
        k.dfl16_u8_cells(static_cast<const uint8_t*>(box_frame), ws.box_offsets.data(), n, *exp_table, d);
    } else {
        for (size_t i = 0; i < n; ++i) {
            const CellHit& hit = cells[i];
            if (exp_table) {  // the same kernel on the cell's 64 logits gathered first
                const uint8_t* logits = static_cast<const uint8_t*>(box_frame) + box.cell(hit.row, hit.col);
                for (int c = 0; c < 64; ++c) ws.box_bytes[c] = logits[box.channel_offset[size_t(c)]];
                k.dfl16_u8(ws.box_bytes, *exp_table, d + 4 * i);
            } else {
                dfl_distances(box, box_frame, hit.row, hit.col, cfg.bins, ws.dfl_scratch.data(), d + 4 * i);
            }
        }
    }
    for (size_t i = 0; i < n; ++i) {
        out[i].head = uint32_t(h);
        out[i].cell = uint32_t(cells[i].row) * uint32_t(box.width) + uint32_t(cells[i].col);
    }
    if (rotated) {
        make_rotated_boxes(h, ws.tensors, ws.frame, cells, n, ws);
        return;
    }
    for (size_t i = 0; i < n; ++i) make_box(d + 4 * i, centre_x[cells[i].col], centre_y[cells[i].row], head.stride, s, out[i].v);
}

void Decoder::Impl::scale_by_objectness(const void* const* tensors, size_t frame, uint32_t head, int row, int col,
                                        int anchor, std::vector<float>& coefficients) const {
    const int out = cfg.heads[head].box_output;
    const TensorView& v = views[size_t(out)];
    const size_t ch = size_t(anchor * (5 + cfg.num_classes + proto_plan.view->channels) + 4);
    const size_t at = v.cell(row, col) + v.channel_offset[ch];
    const void* f = frame_of(tensors, out, frame);
    float raw = 0.0f;
    switch (v.dtype) {
        case DType::U8: raw = dequantize(float(static_cast<const uint8_t*>(f)[at]), v.zp[ch], v.scale[ch]); break;
        case DType::U16: raw = dequantize(float(static_cast<const uint16_t*>(f)[at]), v.zp[ch], v.scale[ch]); break;
        case DType::F32: raw = static_cast<const float*>(f)[at]; break;
    }
    const float obj = cfg.settings.sigmoid ? sigmoid(raw) : raw;
    for (float& c : coefficients) c = c * obj;
}

void Decoder::Impl::decode_masks(const void* const* tensors, size_t frame, size_t start, Workspace& ws) {
    const Settings& s = cfg.settings;
    const TensorView& proto = *proto_plan.view;
    const void* proto_frame = static_cast<const char*>(tensors[cfg.proto_output]) +
                              frame * proto.frame_stride * dtype_size(proto.dtype);
    const size_t logit_start = ws.logits.size();
    const MaskSampling to_input = sampling_to_input(grid);
    size_t kept = start;
    for (size_t i = start; i < ws.results.size(); ++i) {
        const Detection d = ws.results[i];
        const HeadSpec& head = cfg.heads[d.head];
        // YOLOv5-seg: the anchor's coefficient view over the head's tensor (anchor_seg.hpp).
        const bool anchored = !anchor_coefs.views.empty();
        int row = 0, col = 0, anchor = 0;
        if (anchored)
            split_anchor_cell(d.cell, anchor_coefs.anchors[d.head], views[size_t(head.box_output)].width, row, col, anchor);
        const size_t plan = anchored ? anchor_coefs.first[d.head] + size_t(anchor) : size_t(d.head);
        const int coef_output = anchored ? head.box_output : head.mask_output;
        const TensorView& mv = anchored ? anchor_coefs.views[plan] : views[size_t(head.mask_output)];
        const void* coef_frame = static_cast<const char*>(tensors[coef_output]) +
                                 frame * mv.frame_stride * dtype_size(mv.dtype);
        if (!anchored) {
            row = int(d.cell / uint32_t(mv.width));
            col = int(d.cell % uint32_t(mv.width));
        }
        // The box in input pixels, x1 y1 x2 y2: the coordinates the masks are cropped with.
        float b[4];
        if (s.yxyx) {
            b[0] = d.box[1]; b[1] = d.box[0]; b[2] = d.box[3]; b[3] = d.box[2];
        } else {
            b[0] = d.box[0]; b[1] = d.box[1]; b[2] = d.box[2]; b[3] = d.box[3];
        }
        if (s.normalized) {
            b[0] *= float(s.image_width); b[2] *= float(s.image_width);
            b[1] *= float(s.image_height); b[3] *= float(s.image_height);
        }
        MaskWindow w = mask_window(b, grid);
        w.offset = ws.logits.size() - logit_start;
        const size_t n = size_t(w.rows) * size_t(w.cols);
        if (n) {
            if (!integer_path(proto_plan, coef_plans[plan]))  // the integer path reads the raw bytes
                gather_cell(mv, coef_frame, row, col, ws.coef_floats.data());
            if (anchored && cfg.mask_objectness) scale_by_objectness(tensors, frame, d.head, row, col, anchor, ws.coef_floats);
            prepare_coefficients(proto_plan, coef_plans[plan], ws.coef_floats.data(), coef_frame, row, col, ws.coef);
            ws.logits.resize(ws.logits.size() + n);
            ws.signs.resize(ws.logits.size());
            window_logits(proto_plan, proto_frame, ws.coef, w, ws.logits.data() + logit_start + w.offset,
                          ws.signs.data() + logit_start + w.offset, ws.cell_scratch);
        }
        if (cfg.drop_empty_masks &&
            (n == 0 || !mask_has_pixels(ws.logits.data() + logit_start + w.offset, w, grid, to_input, b, ws.render_scratch))) {
            ws.logits.resize(logit_start + w.offset);  // this detection's logits go
            ws.signs.resize(logit_start + w.offset);
            continue;
        }
        ws.results[kept] = d;
        if (ws.windows.size() <= kept) ws.windows.resize(kept + 1);
        ws.windows[kept] = w;
        ++kept;
    }
    ws.results.resize(kept);
    ws.windows.resize(kept);
}

void Decoder::Impl::decode_frame_end2end(const void* const* tensors, size_t frame, Workspace& ws) {
    const Settings& s = cfg.settings;
    TopkWorkspace& t = ws.topk;
    t.clear();
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        const HeadSpec& head = cfg.heads[h];
        TopkHead& th = ws.topk_heads[h];
        th.cls = &views[size_t(head.cls_output)];
        th.gate = &gates[h];
        th.frame = frame_of(tensors, head.cls_output, frame);
        // The chosen anchors' box values, prefetched by the selection (read by the rows below).
        const TensorView& box = views[size_t(head.box_output)];
        const size_t bytes = dtype_size(box.dtype);
        th.touch = static_cast<const char*>(frame_of(tensors, head.box_output, frame));
        th.touch_row = box.row_stride * bytes;
        th.touch_col = box.col_stride * bytes;
        add_anchors(th, uint32_t(h), t);
    }
    // Ultralytics' k = min(max_det, anchors), over every anchor of the frame, not only those passing.
    const size_t max_det = s.max_total < 0 ? size_t(300) : size_t(s.max_total);
    const size_t k = std::min(max_det, total_anchors);
    select_end2end(t, ws.topk_heads.data(), k, cfg.num_classes, s.agnostic);
    const uint64_t nc = uint64_t(cfg.num_classes);
    const Divisor by_nc(nc);
    if (direct_end2end_boxes) {
        end2end_rows_direct(tensors, frame, ws);
        return;
    }
    // The pairs that pass (Ultralytics: the confidence test after the top-k), as candidates whose
    // `box` is the stage-1 rank of their anchor.
    ws.candidates.clear();
    for (const TopkKey& key : t.selected) {
        const uint64_t rank = by_nc(key.index);
        const int c = int(key.index - rank * nc);
        const float th = s.score_threshold.size() == 1 ? s.score_threshold[0] : s.score_threshold[size_t(c)];
        if (!score_passes(key.score, th, s.score_inclusive)) continue;
        Candidate& cand = ws.candidates.emplace_back();  // field by field (no stack temporary)
        cand.score = key.score;
        cand.class_id = c;
        cand.box = uint32_t(rank);
    }
    // One box per anchor used, decoded a head at a time (one DFL call per head, as the NMS path).
    const uint32_t none = ~uint32_t(0);
    ws.rank_box.assign(t.ranked.size(), none);
    for (const Candidate& cand : ws.candidates) ws.rank_box[cand.box] = none - 1;  // used, box not decoded yet
    ws.boxes.clear();
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        ws.box_cells.clear();
        const uint32_t first = uint32_t(ws.boxes.size());
        for (const Candidate& cand : ws.candidates) {
            const TopkAnchor& a = t.anchors[cand.box];  // (stage 2's)
            if (a.head != h || ws.rank_box[cand.box] != none - 1) continue;
            ws.rank_box[cand.box] = first + uint32_t(ws.box_cells.size());
            // Field by field: a braced temporary is built on the stack in two halves and read
            // back whole, a store-forwarding stall per box (a third of this loop's time).
            CellHit& cell = ws.box_cells.emplace_back();
            cell.row = a.row;
            cell.col = a.col;
            cell.first_class = 0;
            cell.class_count = 0;
        }
        if (!ws.box_cells.empty())
            decode_boxes(h, frame_of(tensors, cfg.heads[h].box_output, frame), ws.box_cells.data(), ws.box_cells.size(), ws);
    }
    for (const Candidate& cand : ws.candidates) {
        const uint32_t at = ws.rank_box[cand.box];
        const Box& b = ws.boxes[at];
        Detection& d = ws.results.emplace_back();
        d.score = cand.score;
        d.class_id = cand.class_id;
        d.head = b.head;
        d.cell = b.cell;
        // OBB: decode_boxes made one rotated box per box decoded, by box index (no rotated NMS
        // end to end: the row keeps its anchor's rotated box, and its box is the one enclosing it,
        // which decode_boxes leaves to the suppression).
        if (rotated) {
            ws.rboxes.push_back(ws.candidate_rboxes[at]);
            enclosing_output_box(ws.candidate_rboxes[at], ws.candidate_turns[at], cfg.settings, d.box);
        } else {
            for (int j = 0; j < 4; ++j) d.box[j] = b.v[j];
        }
    }
}

void Decoder::Impl::end2end_rows_direct(const void* const* tensors, size_t frame, Workspace& ws) {
    const Settings& s = cfg.settings;
    const TopkWorkspace& t = ws.topk;
    // What a row reads of its head, gathered once a frame (not through the views per row).
    ws.e2e_heads.resize(cfg.heads.size());
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        const TensorView& box = views[size_t(cfg.heads[h].box_output)];
        E2eHead& e = ws.e2e_heads[h];
        e.box = static_cast<const uint8_t*>(frame_of(tensors, cfg.heads[h].box_output, frame));
        e.row_stride = box.row_stride;
        e.col_stride = box.col_stride;
        e.zp = box.zp[0];
        e.scale = box.scale[0];
        e.width = uint32_t(box.width);
        e.stride = cfg.heads[h].stride;
        e.centre_x = centres[h].x.data();
        e.centre_y = centres[h].y.data();
    }
    const uint64_t nc = uint64_t(cfg.num_classes);
    const Divisor by_nc(nc);
    const bool one_threshold = s.score_threshold.size() == 1;
    const float th0 = s.score_threshold[0];
    ws.results.reserve(ws.results.size() + t.selected.size());  // (one growth a frame at most)
    for (const TopkKey& key : t.selected) {
        const uint64_t rank = by_nc(key.index);
        const int c = int(key.index - rank * nc);
        const float th = one_threshold ? th0 : s.score_threshold[size_t(c)];
        if (!score_passes(key.score, th, s.score_inclusive)) continue;  // Ultralytics' test after the top-k
        const TopkAnchor& a = t.anchors[rank];
        const uint32_t h = a.head;
        const size_t row = size_t(a.row), col = size_t(a.col);
        const E2eHead& e = ws.e2e_heads[h];
        const uint8_t* p = e.box + row * e.row_stride + col * e.col_stride;
        float d[4];
        dequantize4_u8(p, e.zp, e.scale, d);
        Detection& out = ws.results.emplace_back();  // field by field (no stack temporary)
        out.score = key.score;
        out.class_id = c;
        out.head = h;
        out.cell = uint32_t(row) * e.width + uint32_t(col);
        make_box(d, e.centre_x[col], e.centre_y[row], e.stride, s, out.box);
    }
}

}  // namespace hailo_decode
