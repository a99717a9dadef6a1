#include "hailo_decode/decoder.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "anchor_heads.hpp"
#include "dfl.hpp"
#include "nms.hpp"
#include "scan.hpp"
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

// Everything one thread needs to decode a frame. It grows to the largest frame seen and stays.
// Cache-line aligned: workspaces of different threads sit side by side in one vector, and their
// vectors' end pointers change on every push_back.
struct alignas(64) Workspace {
    ScanResult scan;
    ScratchVector<Box> boxes;
    ScratchVector<Candidate> candidates;
    SortScratch sort_scratch;
    std::vector<float> dfl_scratch;
    ScratchVector<CellHit> box_cells;   // cells that give a candidate, when not every cell does
    ScratchVector<size_t> box_offsets;  // one head's cells in its box tensor
    ScratchVector<float> distances;     // and their four DFL distances
    uint8_t box_bytes[64];  // one cell's box logits, gathered from layouts without contiguous channels
    NmsWorkspace nms;
    TopkWorkspace topk;                 // end-to-end selection
    std::vector<TopkHead> topk_heads;   // one per head, pointed at the frame being decoded
    ScratchVector<uint32_t> rank_box;       // end2end: the box of each stage-1 rank used
    ScratchVector<TopkAnchor> rank_anchor;  // and its anchor
    std::vector<Detection> results;  // detections of the frames this workspace decoded
};

struct FrameSlot {
    size_t workspace, start, count;
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
    std::vector<Workspace> workspaces;   // one per thread
    std::vector<FrameSlot> frames;       // last decode's frames
    std::unique_ptr<ThreadPool> pool;

    void validate();
    void check_finite(const TensorView& v, const void* base, size_t n_frames) const;
    void decode_frame(const void* const* tensors, size_t frame, Workspace& ws);
    // End-to-end heads: topk.hpp's selection instead of the scan and NMS.
    void decode_frame_end2end(const void* const* tensors, size_t frame, Workspace& ws);
    const void* frame_of(const void* const* tensors, int output, size_t frame) const {
        const TensorView& v = views[size_t(output)];
        return static_cast<const char*>(tensors[output]) + frame * v.frame_stride * dtype_size(v.dtype);
    }
    // Candidates and boxes of the hits in ws.scan (head h), appended to the workspace's lists.
    template <typename T>
    void decode_hits(size_t h, const T* cls_frame, const void* box_frame, Workspace& ws);
    // Boxes of the n cells (DFL, then corners), appended to ws.boxes.
    void decode_boxes(size_t h, const void* box_frame, const CellHit* cells, size_t n, Workspace& ws);
};

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
    views.reserve(cfg.outputs.size());
    for (const auto& o : cfg.outputs) views.push_back(make_tensor_view(o));
    if (cfg.kind != HeadKind::DFL) {  // anchor-based heads: their own room validates them
        if (s.end2end) bad("end2end selection is for DFL heads (YOLO26/YOLOv10), not anchor-based ones");
        anchor_heads.reset(new AnchorHeads(cfg, views));
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
        plans.push_back(make_scan_plan(cls, scorers.back()));
        dfl_tables.push_back(make_dfl_exp_table(box, cfg.bins));
        centres.push_back(make_cell_centres(box.width, box.height, h.stride, s));
        total_anchors += size_t(box.height) * size_t(box.width);
        if (s.end2end) {
            const float lowest = *std::min_element(s.score_threshold.begin(), s.score_threshold.end());
            gates.push_back(make_class_scorer(cls, {lowest}, s.score_inclusive, s.sigmoid));
        }
    }
}

Decoder::Decoder(Config config, int threads) : impl_(new Impl) {
    if (threads < 1 || threads > 256) bad("threads must be in [1, 256], got " + std::to_string(threads));
    impl_->cfg = std::move(config);
    impl_->validate();
    impl_->workspaces.resize(size_t(threads));
    for (Workspace& ws : impl_->workspaces) {
        ws.dfl_scratch.resize(size_t(5 * impl_->cfg.bins));
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
        for (size_t f; (f = batch.next.fetch_add(1, std::memory_order_relaxed)) < batch.n_frames;) {
            const size_t start = ws.results.size();
            batch.m.decode_frame(batch.tensors, f, ws);
            batch.m.frames[f] = {part, start, ws.results.size() - start};
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
    switch (cfg.kind) {
        case HeadKind::YOLOV5:
        case HeadKind::YOLOX:
            anchor_heads->collect(tensors, frame, ws.candidates, ws.boxes);
            sort_candidates(ws.candidates, cfg.settings.hailort_sort, ws.sort_scratch);
            suppress(ws.candidates, ws.boxes, cfg.settings, cfg.num_classes, ws.nms, ws.results);
            return;
        case HeadKind::DFL:
            if (cfg.settings.end2end) {
                decode_frame_end2end(tensors, frame, ws);
                return;
            }
            break;
    }
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        const HeadSpec& head = cfg.heads[h];
        const TensorView& cls = views[size_t(head.cls_output)];
        const TensorView& box = views[size_t(head.box_output)];
        const void* cls_frame = static_cast<const char*>(tensors[head.cls_output]) + frame * cls.frame_stride * dtype_size(cls.dtype);
        const void* box_frame = static_cast<const char*>(tensors[head.box_output]) + frame * box.frame_stride * dtype_size(box.dtype);
        // The whole tensor is scanned, then its hits decoded. (Decoding each band of rows' hits
        // as they are found, with the next rows prefetched, was measured slower.)
        ws.scan.clear();
        scan_class_tensor(plans[h], cls, scorers[h], cls_frame, ws.scan);
        switch (cls.dtype) {
            case DType::U8: decode_hits(h, static_cast<const uint8_t*>(cls_frame), box_frame, ws); break;
            case DType::U16: decode_hits(h, static_cast<const uint16_t*>(cls_frame), box_frame, ws); break;
            case DType::F32: decode_hits(h, static_cast<const float*>(cls_frame), box_frame, ws); break;
        }
    }
    sort_candidates(ws.candidates, cfg.settings.hailort_sort, ws.sort_scratch);
    suppress(ws.candidates, ws.boxes, cfg.settings, cfg.num_classes, ws.nms, ws.results);
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
        make_box(d + 4 * i, centre_x[cells[i].col], centre_y[cells[i].row], head.stride, s, out[i].v);
        out[i].head = uint32_t(h);
        out[i].cell = uint32_t(cells[i].row) * uint32_t(box.width) + uint32_t(cells[i].col);
    }
}

void Decoder::Impl::decode_frame_end2end(const void* const* tensors, size_t frame, Workspace& ws) {
    const Settings& s = cfg.settings;
    TopkWorkspace& t = ws.topk;
    t.clear();
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        const HeadSpec& head = cfg.heads[h];
        ws.topk_heads[h] = TopkHead{&views[size_t(head.cls_output)], &gates[h], frame_of(tensors, head.cls_output, frame)};
        add_anchors(ws.topk_heads[h], uint32_t(h), t);
    }
    // Ultralytics' k = min(max_det, anchors), over every anchor of the frame, not only those passing.
    const size_t max_det = s.max_total < 0 ? size_t(300) : size_t(s.max_total);
    const size_t k = std::min(max_det, total_anchors);
    select_end2end(t, ws.topk_heads.data(), k, cfg.num_classes, s.agnostic);
    const uint64_t nc = uint64_t(cfg.num_classes);
    // The pairs that pass (Ultralytics: the confidence test after the top-k), as candidates whose
    // `box` is the stage-1 rank of their anchor.
    ws.candidates.clear();
    for (const TopkKey& key : t.selected) {
        const int c = int(key.index % nc);
        const float th = s.score_threshold.size() == 1 ? s.score_threshold[0] : s.score_threshold[size_t(c)];
        if (score_passes(key.score, th, s.score_inclusive)) ws.candidates.push_back(Candidate{key.score, c, uint32_t(key.index / nc)});
    }
    // One box per anchor used, decoded a head at a time (one DFL call per head, as the NMS path).
    const uint32_t none = ~uint32_t(0);
    ws.rank_box.assign(t.ranked.size(), none);
    ws.rank_anchor.resize(t.ranked.size());
    for (const Candidate& cand : ws.candidates)
        if (ws.rank_box[cand.box] == none) {
            ws.rank_anchor[cand.box] = anchor_at(t, ws.topk_heads.data(), t.ranked[cand.box].index);
            ws.rank_box[cand.box] = none - 1;  // used, box not decoded yet
        }
    ws.boxes.clear();
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        ws.box_cells.clear();
        const uint32_t first = uint32_t(ws.boxes.size());
        for (const Candidate& cand : ws.candidates) {
            const TopkAnchor& a = ws.rank_anchor[cand.box];
            if (a.head != h || ws.rank_box[cand.box] != none - 1) continue;
            ws.rank_box[cand.box] = first + uint32_t(ws.box_cells.size());
            ws.box_cells.push_back(CellHit{a.row, a.col, 0, 0});
        }
        if (!ws.box_cells.empty())
            decode_boxes(h, frame_of(tensors, cfg.heads[h].box_output, frame), ws.box_cells.data(), ws.box_cells.size(), ws);
    }
    for (const Candidate& cand : ws.candidates) {
        const Box& b = ws.boxes[ws.rank_box[cand.box]];
        Detection& d = ws.results.emplace_back();
        for (int j = 0; j < 4; ++j) d.box[j] = b.v[j];
        d.score = cand.score;
        d.class_id = cand.class_id;
        d.head = b.head;
        d.cell = b.cell;
    }
}

}  // namespace hailo_decode
