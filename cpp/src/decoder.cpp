#include "hailo_decode/decoder.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "dfl.hpp"
#include "nms.hpp"
#include "scan.hpp"
#include "score_threshold.hpp"
#include "tensor_view.hpp"
#include "thread_pool.hpp"

namespace hailo_decode {

using namespace detail;

size_t required_elements(const TensorSpec& spec, size_t n_frames) {
    return needed_elements(make_tensor_view(spec), n_frames);
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

// Everything one thread needs to decode a frame. It grows to the largest frame seen and stays.
struct Workspace {
    ScanResult scan;
    std::vector<Box> boxes;
    std::vector<Candidate> candidates;
    std::vector<float> dfl_scratch;
    NmsWorkspace nms;
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
    std::vector<Workspace> workspaces;   // one per thread
    std::vector<FrameSlot> frames;       // last decode's frames
    std::unique_ptr<ThreadPool> pool;

    void validate();
    void check_finite(const TensorView& v, const void* base, size_t n_frames) const;
    void decode_frame(const void* const* tensors, size_t frame, Workspace& ws);
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
    const size_t parts = std::min(m.workspaces.size(), n_frames);
    auto work = [&](size_t part) {
        // Contiguous chunks: part p decodes frames [p*n/parts, (p+1)*n/parts).
        Workspace& ws = m.workspaces[part];
        ws.results.clear();
        for (size_t f = part * n_frames / parts; f < (part + 1) * n_frames / parts; ++f) {
            const size_t start = ws.results.size();
            m.decode_frame(tensors, f, ws);
            m.frames[f] = {part, start, ws.results.size() - start};
        }
    };
    if (parts <= 1) {
        if (n_frames) work(0);
    } else {
        m.pool->run(parts, work);
    }
}

void Decoder::Impl::decode_frame(const void* const* tensors, size_t frame, Workspace& ws) {
    const Settings& s = cfg.settings;
    ws.boxes.clear();
    ws.candidates.clear();
    for (size_t h = 0; h < cfg.heads.size(); ++h) {
        const HeadSpec& head = cfg.heads[h];
        const TensorView& cls = views[size_t(head.cls_output)];
        const TensorView& box = views[size_t(head.box_output)];
        const ClassScorer& scorer = scorers[h];
        const void* cls_frame = static_cast<const char*>(tensors[head.cls_output]) + frame * cls.frame_stride * dtype_size(cls.dtype);
        const void* box_frame = static_cast<const char*>(tensors[head.box_output]) + frame * box.frame_stride * dtype_size(box.dtype);

        ws.scan.clear();
        scan_class_tensor(plans[h], cls, scorer, cls_frame, ws.scan);
        for (const CellHit& hit : ws.scan.cells) {
            const size_t cell = cls.cell(hit.row, hit.col);
            const int32_t* passing = ws.scan.classes.data() + hit.first_class;
            const uint32_t box_index = uint32_t(ws.boxes.size());
            auto score_of = [&](int c) -> float {
                const size_t idx = cell + cls.channel_offset[size_t(c)];
                switch (cls.dtype) {
                    case DType::U8: return class_score(scorer, cls, static_cast<const uint8_t*>(cls_frame), idx, c);
                    case DType::U16: return class_score(scorer, cls, static_cast<const uint16_t*>(cls_frame), idx, c);
                    default: return class_score(scorer, cls, static_cast<const float*>(cls_frame), idx, c);
                }
            };
            if (s.multi_label) {
                for (uint32_t k = 0; k < hit.class_count; ++k)
                    ws.candidates.push_back({score_of(passing[k]), passing[k], box_index, uint32_t(ws.candidates.size())});
            } else {
                // Best class of the cell (first on ties), a candidate only if it passes its own threshold.
                int best = 0;
                float best_score = score_of(0);
                for (int c = 1; c < cfg.num_classes; ++c) {
                    const float v = score_of(c);
                    if (v > best_score) { best = c; best_score = v; }
                }
                bool passes = false;
                for (uint32_t k = 0; k < hit.class_count; ++k) passes = passes || passing[k] == best;
                if (!passes) continue;
                ws.candidates.push_back({best_score, best, box_index, uint32_t(ws.candidates.size())});
            }
            float d[4];
            dfl_distances(box, box_frame, hit.row, hit.col, cfg.bins, ws.dfl_scratch.data(), d);
            Box b;
            make_box(d, hit.row, hit.col, head.stride, s, b.v);
            ws.boxes.push_back(b);
        }
    }
    sort_candidates(ws.candidates, s.hailort_sort);
    suppress(ws.candidates, ws.boxes, s, cfg.num_classes, ws.nms, ws.results);
}

}  // namespace hailo_decode
