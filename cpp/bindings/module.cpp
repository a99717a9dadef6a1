// pybind11 module: turns numpy arrays into pointers (never copies), releases the GIL while the C++
// core works, and turns results into numpy arrays. Validation with friendly messages lives in
// Python; the checks here are the last guard that keeps every read in bounds.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "hailo_decode/decoder.hpp"
#include "hailo_decode/pack.hpp"
#include "hailo_decode/pack_by_score.hpp"
#include "hailo_decode/bbox_only.hpp"
#include "hailo_decode/yolov5_seg.hpp"
#include "hailo_decode/yolov5_bbox_only.hpp"
#include "masks.hpp"
#include "setup.hpp"
#include "../src/kernels/kernels.hpp"
#include "../src/rotated_nms.hpp"

namespace py = pybind11;
using namespace hailo_decode;
using hailo_decode_bindings::check_detection_arrays;
using hailo_decode_bindings::writeable_output;

namespace {

// Seconds each of `iterations` calls of `call` took (the benchmarks' timings, in C++).
template <typename F>
std::vector<double> seconds_per_call(size_t iterations, F&& call) {
    std::vector<double> times(iterations);
    for (size_t it = 0; it < iterations; ++it) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        times[it] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return times;
}

char dtype_kind(DType t) { return t == DType::F32 ? 'f' : 'u'; }

// Pointer and element count of an array, after checking it can be read in place as `spec` says.
const void* checked_buffer(const py::array& a, const TensorSpec& spec, size_t& elements) {
    const py::dtype dt = a.dtype();
    if (dt.kind() != dtype_kind(spec.dtype) || size_t(dt.itemsize()) != dtype_size(spec.dtype))
        throw py::type_error("output '" + spec.name + "': dtype " + std::string(py::str(dt)) + " does not match the declared one");
    if (!(a.flags() & py::array::c_style))
        throw py::value_error("output '" + spec.name + "': array is not C-contiguous");
    // Elements are read in place as their type: a misaligned one would be undefined behaviour.
    if (a.size() > 0 && reinterpret_cast<uintptr_t>(a.data()) % dtype_size(spec.dtype) != 0)
        throw py::value_error("output '" + spec.name + "': array data is not aligned to its elements");
    elements = size_t(a.size());
    return a.data();
}

// Detections -> (boxes (n, 4) f32, scores (n,) f32, class_ids (n,) i32), as Decoder.decode gives them.
py::tuple detection_arrays(const Detection* dets, size_t n) {
    py::array_t<float> boxes({py::ssize_t(n), py::ssize_t(4)});
    py::array_t<float> scores{py::ssize_t(n)};
    py::array_t<int32_t> classes{py::ssize_t(n)};
    auto b = boxes.mutable_unchecked<2>();
    auto s = scores.mutable_unchecked<1>();
    auto c = classes.mutable_unchecked<1>();
    for (size_t i = 0; i < n; ++i) {
        for (py::ssize_t k = 0; k < 4; ++k) b(py::ssize_t(i), k) = dets[i].box[k];
        s(py::ssize_t(i)) = dets[i].score;
        c(py::ssize_t(i)) = dets[i].class_id;
    }
    return py::make_tuple(boxes, scores, classes);
}

// A Decoder that one Python thread at a time may use. The mutex is only ever waited on with the
// GIL released, so a thread holding it can always take the GIL back.
class PyDecoder {
public:
    PyDecoder(Config cfg, int threads) : dec_(std::move(cfg), threads) {}

    // Pointers and element counts of the arrays, one per output, each checked by checked_buffer.
    void collect(const std::vector<py::array>& arrays, std::vector<const void*>& ptrs, std::vector<size_t>& elements) const {
        const auto& outs = dec_.config().outputs;
        if (arrays.size() != outs.size())
            throw py::value_error("expected " + std::to_string(outs.size()) + " arrays, got " + std::to_string(arrays.size()));
        ptrs.resize(arrays.size());
        elements.resize(arrays.size());
        for (size_t i = 0; i < arrays.size(); ++i) ptrs[i] = checked_buffer(arrays[i], outs[i], elements[i]);
    }

    py::list decode(const std::vector<py::array>& arrays, size_t n_frames) {
        std::vector<const void*> ptrs;
        std::vector<size_t> elements;
        collect(arrays, ptrs, elements);
        std::unique_lock<std::mutex> lock = run(ptrs, elements, n_frames);
        py::list frames;
        for (size_t f = 0; f < n_frames; ++f) frames.append(frame_tuple(f));
        return frames;
    }

    // The one-frame call as most callers make it (Decoder.decode's fast path): `raw` a dict that
    // holds, under each output's name, an ndarray of exactly the declared dtype and one-frame shape
    // (set_one_frame). Then the frame's tuple, as decode gives it; None when anything differs, and
    // Python's own checks take over (they say what is wrong).
    py::object decode_one(const py::handle& raw) {
        const size_t n_out = one_names_.size();
        if (n_out == 0 || !PyDict_CheckExact(raw.ptr()) || size_t(PyDict_Size(raw.ptr())) != n_out) return py::none();
        std::vector<py::array> arrays;
        arrays.reserve(n_out);
        for (size_t i = 0; i < n_out; ++i) {
            PyObject* item = PyDict_GetItem(raw.ptr(), one_names_[i].ptr());  // borrowed
            if (item == nullptr || Py_TYPE(item) != reinterpret_cast<PyTypeObject*>(ndarray_type_.ptr())) return py::none();
            py::array a = py::reinterpret_borrow<py::array>(item);
            const std::vector<py::ssize_t>& shape = one_shapes_[i];
            if (size_t(a.ndim()) != shape.size() || !std::equal(shape.begin(), shape.end(), a.shape()) ||
                !a.dtype().equal(one_dtypes_[i]))
                return py::none();
            arrays.push_back(std::move(a));
        }
        std::vector<const void*> ptrs;
        std::vector<size_t> elements;
        collect(arrays, ptrs, elements);  // contiguity and alignment: errors go to Python's checks
        std::unique_lock<std::mutex> lock = run(ptrs, elements, 1);
        return frame_tuple(0);
    }

    void set_one_frame(std::vector<py::str> names, std::vector<py::dtype> dtypes,
                       std::vector<std::vector<py::ssize_t>> shapes) {
        const size_t n = dec_.config().outputs.size();
        if (names.size() != n || dtypes.size() != n || shapes.size() != n)
            throw py::value_error("set_one_frame: one name, dtype and shape per output");
        one_names_ = std::move(names);
        one_dtypes_ = std::move(dtypes);
        one_shapes_ = std::move(shapes);
        ndarray_type_ = py::module_::import("numpy").attr("ndarray");
    }

    // Decodes with the GIL released; the lock it returns keeps the results until the caller has
    // turned them into arrays.
    std::unique_lock<std::mutex> run(const std::vector<const void*>& ptrs, const std::vector<size_t>& elements,
                                     size_t n_frames) {
        std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
        py::gil_scoped_release release;
        lock.lock();
        dec_.decode(ptrs.data(), elements.data(), n_frames);
        return lock;
    }

    // Frame f of the last decode: (boxes, scores, classes), then the task's outputs.
    py::tuple frame_tuple(size_t f) {
        auto [dets, n] = dec_.frame(f);
        const py::tuple rows = detection_arrays(dets, n);
        const py::object boxes = rows[0], scores = rows[1], classes = rows[2];
        // (what a config has, not the pointers: a frame without detections may have none)
        const bool has_kpt = dec_.config().num_keypoints > 0;
        const bool has_rbox = !dec_.config().heads.empty() && dec_.config().heads[0].angle_output >= 0;
        const auto kp = dec_.keypoints(f);
        const auto rb = dec_.rboxes(f);
        if (dec_.config().proto_output >= 0) {  // segmentation: the frame's mask windows and logits
            py::tuple masks = hailo_decode_bindings::frame_masks(dec_, f);
            return py::make_tuple(boxes, scores, classes, masks[0], masks[1], masks[2], masks[3]);
        }
        if (!has_kpt && !has_rbox) return rows;
        // Task outputs: (boxes, scores, classes, keypoints (n, K, 3) or None, rboxes (n, 5) or None)
        py::object keypoints = py::none(), rboxes = py::none();
        if (has_kpt) {
            const py::ssize_t k = dec_.config().num_keypoints;
            py::array_t<float> a({py::ssize_t(n), k, py::ssize_t(3)});
            if (n) std::copy(kp.first, kp.first + n * size_t(k) * 3, a.mutable_data());
            keypoints = a;
        }
        if (has_rbox) {
            py::array_t<float> a({py::ssize_t(n), py::ssize_t(5)});
            if (n) std::copy(rb.first, rb.first + n * 5, a.mutable_data());
            rboxes = a;
        }
        return py::make_tuple(boxes, scores, classes, keypoints, rboxes);
    }

    // Seconds per decode of the same arrays, `iterations` times, timed in C++ (benchmarks).
    std::vector<double> time_decode(const std::vector<py::array>& arrays, size_t n_frames, size_t iterations) {
        std::vector<const void*> ptrs;
        std::vector<size_t> elements;
        collect(arrays, ptrs, elements);
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        return seconds_per_call(iterations, [&] { dec_.decode(ptrs.data(), elements.data(), n_frames); });
    }

    const Config& config() const { return dec_.config(); }
    int threads() const { return dec_.threads(); }
    MaskGrid mask_grid() const { return dec_.mask_grid(); }

    // YOLOv5-seg: decode n_frames and write HailoRT's yolov5_seg byte-mask frame of each into
    // out's rows (hailo_decode/yolov5_seg.hpp), with the GIL released. Returns per frame (records,
    // count field, bytes, truncated). `iterations` > 1 repeats the whole call (benchmarks) and
    // returns the seconds of each as a second list.
    py::tuple hailort_seg_frames(const std::vector<py::array>& arrays, size_t n_frames, size_t max_total,
                                 double mask_threshold, py::array out, size_t iterations, int layout) {
        std::vector<const void*> ptrs;
        std::vector<size_t> elements;
        collect(arrays, ptrs, elements);
        if (out.dtype().kind() != 'u' || out.dtype().itemsize() != 1 || !(out.flags() & py::array::c_style) ||
            !out.writeable() || out.ndim() != 2 || size_t(out.shape(0)) < n_frames)
            throw py::value_error("out must be a writeable C-contiguous uint8 array of (frames, bytes)");
        if (layout != int(ByteMaskLayout::HailoRT423) && layout != int(ByteMaskLayout::HailoRT52))
            throw py::value_error("layout must be 0 (HailoRT 4.x-5.1 records) or 1 (5.2), got " + std::to_string(layout));
        if (!seg_writer_) seg_writer_.reset(new Yolov5SegFrameWriter(dec_.config()));
        uint8_t* base = static_cast<uint8_t*>(out.mutable_data());
        const size_t row = size_t(out.shape(1));
        std::vector<Yolov5SegFramePacked> packed(n_frames);
        std::vector<double> times;
        {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(mutex_);
            dec_.set_masks_enabled(false);  // the writer computes the op's masks; the decoder's would go unused
            try {
                times = seconds_per_call(std::max<size_t>(iterations, 1), [&] {
                    dec_.decode(ptrs.data(), elements.data(), n_frames);
                    for (size_t f = 0; f < n_frames; ++f)
                        packed[f] = seg_writer_->write(dec_, f, ptrs.data(), max_total, mask_threshold, base + f * row, row,
                                                       ByteMaskLayout(layout));
                });
            } catch (...) {
                dec_.set_masks_enabled(true);
                throw;
            }
            dec_.set_masks_enabled(true);
        }
        py::list frames;
        for (const Yolov5SegFramePacked& p : packed) frames.append(py::make_tuple(p.records, p.count, p.bytes, p.truncated));
        return py::make_tuple(frames, times);
    }

private:
    Decoder dec_;
    std::mutex mutex_;
    std::unique_ptr<Yolov5SegFrameWriter> seg_writer_;  // built on first use
    std::vector<py::str> one_names_;  // set_one_frame's
    std::vector<py::dtype> one_dtypes_;
    std::vector<std::vector<py::ssize_t>> one_shapes_;
    py::object ndarray_type_;
};

void pack(py::array_t<float, py::array::c_style> boxes, py::array_t<float, py::array::c_style> scores,
          py::array_t<int32_t, py::array::c_style> class_ids, size_t num_classes, size_t max_per_class, py::array out) {
    check_detection_arrays(boxes, scores, class_ids);
    const size_t n = size_t(scores.size());
    size_t out_n = 0;
    float* dst = writeable_output<float>(out, out_n, "float32");
    const float* pb = boxes.data();
    const float* ps = scores.data();
    const int32_t* pc = class_ids.data();
    py::gil_scoped_release release;
    pack_hailo_nms_by_class(pb, ps, pc, n, num_classes, max_per_class, dst, out_n);
}

void pack_by_score(py::array_t<float, py::array::c_style> boxes, py::array_t<float, py::array::c_style> scores,
                   py::array_t<int32_t, py::array::c_style> class_ids, size_t max_bboxes_total, py::array out) {
    check_detection_arrays(boxes, scores, class_ids);
    const size_t n = size_t(scores.size());
    size_t out_n = 0;
    uint8_t* dst = writeable_output<uint8_t>(out, out_n, "uint8");
    const float* pb = boxes.data();
    const float* ps = scores.data();
    const int32_t* pc = class_ids.data();
    py::gil_scoped_release release;
    pack_hailo_nms_by_score(pb, ps, pc, n, max_bboxes_total, dst, out_n);
}

py::tuple bbox_only(py::array rows, size_t proposals, int num_classes, const Settings& settings) {
    if (!(rows.dtype().kind() == 'f' && rows.dtype().itemsize() == 4) || !(rows.flags() & py::array::c_style))
        throw py::type_error("rows must be a C-contiguous float32 array");
    if (rows.size() > 0 && reinterpret_cast<uintptr_t>(rows.data()) % alignof(float) != 0)
        throw py::value_error("rows: array data is not aligned to its float32 elements");
    const float* p = static_cast<const float*>(rows.data());
    const size_t n = size_t(rows.size());
    std::vector<Detection> out;
    {
        py::gil_scoped_release release;
        decode_bbox_only(p, n, proposals, num_classes, settings, out);
    }
    return detection_arrays(out.data(), out.size());
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "hailo-decode C++ core";

    py::enum_<DType>(m, "DType").value("U8", DType::U8).value("U16", DType::U16).value("F32", DType::F32);
    py::enum_<Order>(m, "Order")
        .value("NHWC", Order::NHWC).value("NHCW", Order::NHCW).value("F8CR", Order::F8CR).value("NCHW", Order::NCHW);

    py::enum_<HeadKind>(m, "HeadKind")
        .value("DFL", HeadKind::DFL).value("YOLOV5", HeadKind::YOLOV5).value("YOLOX", HeadKind::YOLOX)
        .value("SSD", HeadKind::SSD);
    py::enum_<KeypointDecode>(m, "KeypointDecode")
        .value("YOLOV8", KeypointDecode::YOLOV8).value("YOLO26", KeypointDecode::YOLO26);
    py::enum_<AngleDecode>(m, "AngleDecode").value("SIGMOID", AngleDecode::SIGMOID).value("RAW", AngleDecode::RAW);

    py::class_<TensorSpec>(m, "TensorSpec")
        .def(py::init<>())
        .def_readwrite("name", &TensorSpec::name)
        .def_readwrite("dtype", &TensorSpec::dtype)
        .def_readwrite("order", &TensorSpec::order)
        .def_readwrite("height", &TensorSpec::height)
        .def_readwrite("width", &TensorSpec::width)
        .def_readwrite("channels", &TensorSpec::channels)
        .def_readwrite("padded_height", &TensorSpec::padded_height)
        .def_readwrite("padded_width", &TensorSpec::padded_width)
        .def_readwrite("padded_channels", &TensorSpec::padded_channels)
        .def_readwrite("frame_stride", &TensorSpec::frame_stride)
        .def_readwrite("zp", &TensorSpec::zp)
        .def_readwrite("scale", &TensorSpec::scale);

    py::class_<HeadSpec>(m, "HeadSpec")
        .def(py::init<>())
        .def_readwrite("box_output", &HeadSpec::box_output)
        .def_readwrite("cls_output", &HeadSpec::cls_output)
        .def_readwrite("stride", &HeadSpec::stride)
        .def_readwrite("kpt_output", &HeadSpec::kpt_output)
        .def_readwrite("angle_output", &HeadSpec::angle_output)
        .def_readwrite("mask_output", &HeadSpec::mask_output)
        .def_readwrite("obj_output", &HeadSpec::obj_output)
        .def_readwrite("anchors", &HeadSpec::anchors);

    py::class_<Settings>(m, "Settings")
        .def(py::init<>())
        .def_readwrite("sigmoid", &Settings::sigmoid)
        .def_readwrite("score_threshold", &Settings::score_threshold)
        .def_readwrite("score_inclusive", &Settings::score_inclusive)
        .def_readwrite("iou_threshold", &Settings::iou_threshold)
        .def_readwrite("iou_inclusive", &Settings::iou_inclusive)
        .def_readwrite("multi_label", &Settings::multi_label)
        .def_readwrite("agnostic", &Settings::agnostic)
        .def_readwrite("max_per_class", &Settings::max_per_class)
        .def_readwrite("max_total", &Settings::max_total)
        .def_readwrite("max_candidates", &Settings::max_candidates)
        .def_readwrite("hailort_sort", &Settings::hailort_sort)
        .def_readwrite("hailort_v5", &Settings::hailort_v5)
        .def_readwrite("normalized", &Settings::normalized)
        .def_readwrite("yxyx", &Settings::yxyx)
        .def_readwrite("image_height", &Settings::image_height)
        .def_readwrite("image_width", &Settings::image_width)
        .def_readwrite("class_offset", &Settings::class_offset)
        .def_readwrite("end2end", &Settings::end2end)
        .def_readwrite("hailort_decode", &Settings::hailort_decode);

    py::class_<Config>(m, "Config")
        .def(py::init<>())
        .def_readwrite("outputs", &Config::outputs)
        .def_readwrite("heads", &Config::heads)
        .def_readwrite("num_classes", &Config::num_classes)
        .def_readwrite("bins", &Config::bins)
        .def_readwrite("kind", &Config::kind)
        .def_readwrite("settings", &Config::settings)
        .def_readwrite("num_keypoints", &Config::num_keypoints)
        .def_readwrite("keypoint_dims", &Config::keypoint_dims)
        .def_readwrite("proto_output", &Config::proto_output)
        .def_readwrite("drop_empty_masks", &Config::drop_empty_masks)
        .def_readwrite("mask_objectness", &Config::mask_objectness)
        .def_readwrite("keypoint_decode", &Config::keypoint_decode)
        .def_readwrite("angle_decode", &Config::angle_decode);

    py::class_<PyDecoder>(m, "Decoder")
        .def(py::init<Config, int>(), py::arg("config"), py::arg("threads") = 1)
        .def_property_readonly("threads", &PyDecoder::threads)
        .def_property_readonly("mask_rule", [](const PyDecoder& d) { return int(d.mask_grid().rule); },
                               "The masks' rule (hailo_decode/masks.hpp MaskRule): 0 Ultralytics' process_mask, 1 YOLOv5's.")
        .def("time_decode", &PyDecoder::time_decode, py::arg("arrays"), py::arg("n_frames"), py::arg("iterations"),
             "Seconds per decode, timed in C++ with the GIL released (benchmarks).")
        .def("set_one_frame", &PyDecoder::set_one_frame, py::arg("names"), py::arg("dtypes"), py::arg("shapes"),
             "The names, dtypes and one-frame shapes decode_one accepts without Python's checks.")
        .def("decode_one", &PyDecoder::decode_one, py::arg("raw"),
             "One frame from a dict of exactly the declared arrays (set_one_frame): its tuple as decode "
             "gives it, or None when the dict is anything else.")
        .def("hailort_seg_frames", &PyDecoder::hailort_seg_frames, py::arg("arrays"), py::arg("n_frames"),
             py::arg("max_total"), py::arg("mask_threshold"), py::arg("out"), py::arg("iterations") = 1,
             py::arg("layout") = 0,
             "YOLOv5-seg: HailoRT's yolov5_seg HAILO_NMS_WITH_BYTE_MASK frames, one per row of out (layout 0: "
             "38-byte records, 1: 5.2's 46-byte ones).")
        .def("decode", &PyDecoder::decode, py::arg("arrays"), py::arg("n_frames"),
             "Decode n_frames; returns a list of (boxes (n,4) f32, scores (n,) f32, class_ids (n,) i32), with "
             "(keypoints (n,K,3) f32 or None, rboxes (n,5) f32 or None) after them when the heads have "
             "keypoint or angle outputs.");

    hailo_decode_bindings::bind_masks(m);
    hailo_decode_bindings::bind_setup(m);
    hailo_decode_bindings::bind_pairing(m);
    m.def("pack_hailo_nms_by_class", &pack, py::arg("boxes_yxyx"), py::arg("scores"), py::arg("class_ids"),
          py::arg("num_classes"), py::arg("max_per_class"), py::arg("out"));
    m.def("probiou", [](py::array_t<float, py::array::c_style | py::array::forcecast> a,
                        py::array_t<float, py::array::c_style | py::array::forcecast> b) {
        // The rotated NMS's probiou of every pair (tests, and users who compare rotated boxes).
        if (a.ndim() != 2 || a.shape(1) != 5 || b.ndim() != 2 || b.shape(1) != 5)
            throw py::value_error("probiou takes two (n, 5) arrays of [cx, cy, w, h, angle]");
        const size_t n = size_t(a.shape(0)), m = size_t(b.shape(0));
        py::array_t<float> out({py::ssize_t(n), py::ssize_t(m)});
        const float* pa = a.data();
        const float* pb = b.data();
        float* po = out.mutable_data();
        py::gil_scoped_release release;
        std::vector<detail::Gaussian> gb(m);
        for (size_t j = 0; j < m; ++j) gb[j] = detail::make_gaussian(pb[5 * j], pb[5 * j + 1], pb[5 * j + 2], pb[5 * j + 3], pb[5 * j + 4]);
        for (size_t i = 0; i < n; ++i) {
            const detail::Gaussian g = detail::make_gaussian(pa[5 * i], pa[5 * i + 1], pa[5 * i + 2], pa[5 * i + 3], pa[5 * i + 4]);
            for (size_t j = 0; j < m; ++j) po[i * m + j] = detail::probiou(g, gb[j]);
        }
        return out;
    }, py::arg("a"), py::arg("b"),
       "probiou (n, m) float32 of rotated boxes a (n, 5) and b (m, 5), [cx, cy, w, h, angle], as Ultralytics' batch_probiou.");
    m.def("time_rotated_nms", [](py::array_t<float, py::array::c_style | py::array::forcecast> rboxes,
                                 py::array_t<int32_t, py::array::c_style | py::array::forcecast> classes,
                                 int num_classes, float iou_threshold, bool agnostic, float class_offset,
                                 size_t iterations) {
        // Seconds per rotated NMS (Fast-NMS with probiou) of n candidates already in score order,
        // timed in C++ (benchmarks): the suppression alone, without scan, DFL or sort.
        if (rboxes.ndim() != 2 || rboxes.shape(1) != 5 || classes.ndim() != 1 || classes.shape(0) != rboxes.shape(0))
            throw py::value_error("time_rotated_nms takes rboxes (n, 5) and classes (n,)");
        const size_t n = size_t(rboxes.shape(0));
        detail::ScratchVector<detail::Candidate> cands(n);
        detail::ScratchVector<detail::RotatedBox> rb(n);
        detail::ScratchVector<detail::Turn> turns(n);
        detail::ScratchVector<detail::Box> boxes(n);
        const float* r = rboxes.data();
        const int32_t* c = classes.data();
        for (size_t i = 0; i < n; ++i) {
            if (c[i] < 0 || c[i] >= num_classes) throw py::value_error("class ids must lie in [0, num_classes)");
            cands[i] = {1.0f - float(i) / float(n + 1), c[i], uint32_t(i)};
            rb[i] = {r[5 * i], r[5 * i + 1], r[5 * i + 2], r[5 * i + 3], r[5 * i + 4]};
            turns[i] = detail::turn_of(rb[i].angle);
            boxes[i] = detail::Box{{0, 0, 0, 0}, 0, uint32_t(i)};
        }
        Settings s;
        s.iou_threshold = iou_threshold;
        s.iou_inclusive = false;
        s.agnostic = agnostic;
        s.class_offset = class_offset;
        detail::RotatedNmsWorkspace ws;
        std::vector<Detection> out;
        detail::ScratchVector<detail::RotatedBox> out_r;
        out.reserve(n);
        out_r.reserve(n);
        std::vector<double> times(iterations);
        size_t kept = 0;
        {
            py::gil_scoped_release release;
            for (size_t it = 0; it < iterations; ++it) {
                out.clear();
                out_r.clear();
                const auto t0 = std::chrono::steady_clock::now();
                detail::suppress_rotated(cands, rb, turns, boxes, s, num_classes, ws, out, out_r);
                times[it] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                kept = out.size();
            }
        }
        return py::make_tuple(times, kept);
    }, py::arg("rboxes"), py::arg("classes"), py::arg("num_classes"), py::arg("iou_threshold"), py::arg("agnostic"),
       py::arg("class_offset"), py::arg("iterations"),
       "(seconds per rotated NMS of the candidates in the given (score) order, kept count): benchmarks.");
    m.def("pack_hailo_nms_by_score", &pack_by_score, py::arg("boxes_yxyx"), py::arg("scores"), py::arg("class_ids"),
          py::arg("max_bboxes_total"), py::arg("out"),
          "Write HAILO_NMS_BY_SCORE bytes (uint16 count, packed 22-byte records) into the uint8 array `out`.");
    m.def("decode_bbox_only", &bbox_only, py::arg("rows"), py::arg("proposals"), py::arg("num_classes"),
          py::arg("settings"),
          "yolov8_bbox_only rows (proposals x (4 + classes) float32) -> (boxes, scores, class_ids) after NMS.");
    py::class_<Yolov5BboxOnly>(m, "Yolov5BboxOnly")
        .def(py::init<Config>(), py::arg("config"))
        .def_property_readonly("proposals", &Yolov5BboxOnly::proposals)
        .def_property_readonly("row_floats", &Yolov5BboxOnly::row_floats)
        .def("write", [](const Yolov5BboxOnly& op, const Config& cfg, const std::vector<py::array>& arrays, size_t n_frames,
                         py::array& out) {
            if (arrays.size() != cfg.outputs.size())
                throw py::value_error("expected " + std::to_string(cfg.outputs.size()) + " arrays, got " +
                                      std::to_string(arrays.size()));
            std::vector<const void*> ptrs(arrays.size());
            std::vector<size_t> elements(arrays.size());
            for (size_t i = 0; i < arrays.size(); ++i) ptrs[i] = checked_buffer(arrays[i], cfg.outputs[i], elements[i]);
            size_t n = 0;
            float* o = writeable_output<float>(out, n, "float32");
            py::gil_scoped_release release;
            op.write(ptrs.data(), elements.data(), n_frames, o, n);
        }, py::arg("config"), py::arg("arrays"), py::arg("n_frames"), py::arg("out"),
           "The yolov5_bbox_only op's rows of n_frames frames into the float32 array `out` (config: the one the "
           "writer was made with, for the arrays' checks).");
    m.def("hailo_nms_by_score_bytes", &hailo_nms_by_score_bytes, py::arg("max_bboxes_total"),
          "Bytes of a HAILO_NMS_BY_SCORE frame: 2 + 22 * max_bboxes_total.");
    m.def("simd_info", [] {
        py::dict d;
        d["active"] = kernels::active().name;
        py::list names;
        std::string all = kernels::available(), item;
        for (size_t i = 0; i <= all.size(); ++i) {
            if (i == all.size() || all[i] == ',') { names.append(item); item.clear(); } else item += all[i];
        }
        d["available"] = names;
        return d;
    }, "Which kernel path runs ('active') and which this build and CPU have ('available', best last).");
    m.def("time_read_pass", [](const std::vector<py::array>& arrays, size_t iterations) {
        // One read pass over every byte of the arrays: the floor any scan must pay.
        std::vector<std::pair<const uint8_t*, size_t>> spans;
        for (const auto& a : arrays) {
            if (!(a.flags() & py::array::c_style)) throw py::value_error("arrays must be C-contiguous");
            spans.emplace_back(static_cast<const uint8_t*>(a.data()), size_t(a.nbytes()));
        }
        volatile uint64_t sink = 0;
        py::gil_scoped_release release;
        const auto& k = kernels::active();
        return seconds_per_call(iterations, [&] {
            uint64_t s = 0;
            for (const auto& sp : spans) s += k.byte_sum(sp.first, sp.second);
            sink = sink + s;
        });
    }, py::arg("arrays"), py::arg("iterations"), "Seconds per read pass over the arrays' bytes (benchmarks).");
    m.def("time_span_pass", [](const std::vector<std::tuple<py::array, size_t, size_t, size_t, size_t>>& spans,
                               size_t iterations) {
        // One read pass over chosen bytes only: per span (array, offset, stride, count, length),
        // the `length` bytes at offset + i * stride for i < count (length 1: one load each, the
        // strided objectness bytes of an anchor head; under 32: inline; longer: the byte_sum kernel).
        struct Span { const uint8_t* p; size_t offset, stride, count, length; };
        std::vector<Span> plan;
        for (const auto& t : spans) {
            const py::array& a = std::get<0>(t);
            if (!(a.flags() & py::array::c_style)) throw py::value_error("arrays must be C-contiguous");
            const Span sp{static_cast<const uint8_t*>(a.data()), std::get<1>(t), std::get<2>(t), std::get<3>(t), std::get<4>(t)};
            const size_t nbytes = size_t(a.nbytes());
            // offset + (count - 1) * stride + length <= nbytes, without overflow
            const bool inside = sp.length > 0 && sp.offset <= nbytes && sp.length <= nbytes - sp.offset &&
                                (sp.stride == 0 || sp.count - 1 <= (nbytes - sp.offset - sp.length) / sp.stride);
            if (sp.count && !inside)
                throw py::value_error("span (offset " + std::to_string(sp.offset) + ", stride " + std::to_string(sp.stride) +
                                      ", count " + std::to_string(sp.count) + ", length " + std::to_string(sp.length) +
                                      ") reaches past its array's " + std::to_string(nbytes) + " bytes");
            plan.push_back(sp);
        }
        volatile uint64_t sink = 0;
        py::gil_scoped_release release;
        const auto& k = kernels::active();
        return seconds_per_call(iterations, [&] {
            uint64_t s = 0;
            for (const Span& sp : plan) {
                const uint8_t* p = sp.p + sp.offset;
                if (sp.length == 1) {
                    uint64_t a0 = 0, a1 = 0;  // two sums: the loads do not wait on one chain of adds
                    size_t i = 0;
                    for (; i + 2 <= sp.count; i += 2) { a0 += p[i * sp.stride]; a1 += p[(i + 1) * sp.stride]; }
                    if (i < sp.count) a0 += p[i * sp.stride];
                    s += a0 + a1;
                } else if (sp.length < 32) {  // short records (a box's 4 values): inline, no call each
                    for (size_t i = 0; i < sp.count; ++i)
                        for (size_t j = 0; j < sp.length; ++j) s += p[i * sp.stride + j];
                } else {
                    for (size_t i = 0; i < sp.count; ++i) s += k.byte_sum(p + i * sp.stride, sp.length);
                }
            }
            sink = sink + s;
        });
    }, py::arg("spans"), py::arg("iterations"),
       "Seconds per read pass over chosen bytes: spans of (array, offset, stride, count, length) (benchmarks).");
    m.def("select_simd", [](const std::string& name) {
        if (!kernels::select(name.c_str()))
            throw py::value_error("kernel path '" + name + "' is not available here; available: " + kernels::available());
    }, py::arg("name"), "Switch the kernel path for the whole process (tests and benchmarks).");
}
