// A test host that does to a hailofilter plugin exactly what hailofilter does (TAPPAS
// gsthailofilter.cpp): dlopen(RTLD_LAZY), init(config-path, function-name), dlsym(function-name);
// per frame a main ROI (bbox 0, 0, 1, 1) with every output tensor attached by add_tensor (each built
// from the line's metadata as hailonet builds it: hailo_tensor_metadata_t on 5.x,
// hailo_vstream_info_t on 3.x), the call, the tensors cleared; free_resources at the end. It
// prints every object the plugin added as JSON on stdout.
//
//   hailo_decode_tappas_host --plugin libhailo_decode_tappas.so [--config FILE] [--function NAME]
//       (--frames DESCRIPTION | --synthetic) [--scaling X Y W H] [--threads N] [--repeat R]
//       [--bench N [--against OTHER.so]] [--quiet] [--abi] [--dlclose]
//
// DESCRIPTION is a text file: "outputs N", then per output one line
//   name height width features meta_type zp scale is_nms nms_classes nms_max_per_class bytes_per_frame data_file
// (meta_type: AUTO, UINT8, UINT16, FLOAT32 or a format type's number, what the metadata says; zp and
// scale as strtof reads them, nan and inf included; the data file holds the
// frames' bytes back to back, which may be float32 while the metadata says UINT8, as with hailonet's
// output-format-type), then "frames F".
// --threads N: N elements (N init()s of the one dlopen handle) run the frames at once, each in its
// own thread; every element's objects must be the first's (exit 1 otherwise).
// --dlclose: after free_resources the plugin is dlclosed (hailofilter's dispose), and only then are
// the frames' objects read and released.
// --bench N: per frame, filter() N times against the core's Decoder::decode alone on the same
// tensors (Decoder::decode and nothing else, through the plugin's own code linked here), medians in
// microseconds on stderr and as JSON on stdout. --against OTHER.so: OTHER's function-name too (init
// with the same config-path), on the same ROIs: another post-process side by side (TAPPAS' own
// libyolov5seg_post.so, benchmarks/tappas_yolov5seg.py).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "abi_line.hpp"
#include "filter_state.hpp"

namespace {

using InitFn = void* (*)(std::string, std::string);
using FilterFn = void (*)(HailoROIPtr, void*);
using FreeFn = void (*)(void*);
using AbiFn = const char* (*)();

struct Output {
    std::string name;
    uint32_t height = 0, width = 0, features = 0;
    int meta_type = 1;  // HailoRT's format type: 0 AUTO, 1 UINT8, 2 UINT16, 3 FLOAT32
    float zp = 0, scale = 1;
    bool is_nms = false;
    uint32_t nms_classes = 0, nms_max_per_class = 0;
    size_t bytes_per_frame = 0;
    std::vector<uint64_t> data;  // 8-byte aligned storage of every frame's bytes
};

struct Frames {
    std::vector<Output> outputs;
    size_t count = 0;
    const uint8_t* data(const Output& o, size_t frame) const {
        return reinterpret_cast<const uint8_t*>(o.data.data()) + frame * o.bytes_per_frame;
    }
};

int type_of(const std::string& s) {
    if (s == "AUTO") return 0;
    if (s == "UINT8") return 1;
    if (s == "UINT16") return 2;
    if (s == "FLOAT32") return 3;
    // A format type by number: one no hailonet names (the fuzz harness's "another element type").
    if (!s.empty() && s.size() < 4 && s.find_first_not_of("0123456789") == std::string::npos) return std::stoi(s);
    throw std::runtime_error("unknown meta_type " + s);
}

// strtof's reading (nan, inf, -inf, hex, 1e39 -> inf, denormals), which istream's >> refuses.
float float_of(const std::string& s) {
    char* end = nullptr;
    const float v = std::strtof(s.c_str(), &end);
    if (s.empty() || *end != '\0') throw std::runtime_error("not a number: " + s);
    return v;
}

Frames read_description(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    Frames f;
    std::string word;
    size_t n = 0;
    in >> word >> n;
    if (word != "outputs") throw std::runtime_error(path + ": expected 'outputs N'");
    std::vector<std::string> files(n);
    for (size_t i = 0; i < n; ++i) {
        Output o;
        std::string type, zp, scale;
        int nms = 0;
        in >> o.name >> o.height >> o.width >> o.features >> type >> zp >> scale >> nms >> o.nms_classes >>
            o.nms_max_per_class >> o.bytes_per_frame >> files[i];
        if (!in) throw std::runtime_error(path + ": bad output line " + std::to_string(i));
        o.meta_type = type_of(type);
        o.zp = float_of(zp);
        o.scale = float_of(scale);
        o.is_nms = nms != 0;
        f.outputs.push_back(std::move(o));
    }
    in >> word >> f.count;
    if (word != "frames" || !in) throw std::runtime_error(path + ": expected 'frames F'");
    for (size_t i = 0; i < n; ++i) {
        Output& o = f.outputs[i];
        std::ifstream data(files[i], std::ios::binary);
        const size_t bytes = o.bytes_per_frame * f.count;
        o.data.assign((bytes + 7) / 8, 0);
        if (!data.read(reinterpret_cast<char*>(o.data.data()), std::streamsize(bytes)))
            throw std::runtime_error("cannot read " + std::to_string(bytes) + " bytes from " + files[i]);
    }
    return f;
}

// A yolov8-like frame at 320x320, 80 classes, uint8, from a fixed-seed generator: a few cells of
// the class tensors light up, the rest stay low.
Frames synthetic_frames() {
    Frames f;
    f.count = 2;
    uint32_t state = 12345;
    auto next = [&state]() {
        state = state * 1664525u + 1013904223u;
        return state >> 8;
    };
    for (int stride : {8, 16, 32}) {
        for (int kind = 0; kind < 2; ++kind) {
            Output o;
            o.name = std::string("synthetic/") + (kind ? "cls_" : "box_") + std::to_string(stride);
            o.height = o.width = uint32_t(320 / stride);
            o.features = kind ? 80 : 64;
            o.meta_type = 1;
            o.zp = 0;
            o.scale = kind ? 1.0f / 255 : 0.1f;
            o.bytes_per_frame = size_t(o.height) * o.width * o.features;
            o.data.assign((o.bytes_per_frame * f.count + 7) / 8, 0);
            uint8_t* bytes = reinterpret_cast<uint8_t*>(o.data.data());
            for (size_t i = 0; i < o.bytes_per_frame * f.count; ++i) {
                const uint32_t r = next();
                bytes[i] = kind ? uint8_t(r % 997 == 0 ? 150 + r % 100 : r % 40) : uint8_t(r % 256);
            }
            f.outputs.push_back(std::move(o));
        }
    }
    return f;
}

HailoTensorPtr make_tensor(const Output& o, const uint8_t* data) {
    uint8_t* buffer = const_cast<uint8_t*>(data);  // HailoTensor takes a mutable pointer; nothing writes it
#if HAILO_DECODE_TAPPAS_LINE == 5
    hailo_tensor_metadata_t m{};
    std::strncpy(m.name, o.name.c_str(), HAILO_MAX_STREAM_NAME_SIZE - 1);
    m.format.type = static_cast<HailoTensorFormatType>(o.meta_type);
    m.format.is_nms = o.is_nms;
    if (o.is_nms) {
        m.nms_shape.number_of_classes = o.nms_classes;
        m.nms_shape.max_bboxes_per_class = o.nms_max_per_class;
        m.nms_shape.max_bboxes_total = o.nms_classes * o.nms_max_per_class;
    } else {
        m.shape.height = o.height;
        m.shape.width = o.width;
        m.shape.features = o.features;
    }
    m.quant_info.qp_zp = o.zp;
    m.quant_info.qp_scale = o.scale;
    return std::make_shared<HailoTensor>(buffer, m);
#else
    hailo_vstream_info_t v{};
    std::strncpy(v.name, o.name.c_str(), HAILO_MAX_STREAM_NAME_SIZE - 1);
    v.direction = HAILO_D2H_STREAM;
    v.format.type = static_cast<hailo_format_type_t>(o.meta_type);
    v.format.order = o.is_nms ? HAILO_FORMAT_ORDER_HAILO_NMS_BY_CLASS : HAILO_FORMAT_ORDER_NHWC;
    v.format.flags = HAILO_FORMAT_FLAGS_NONE;
    if (o.is_nms) {
        v.nms_shape.number_of_classes = o.nms_classes;
        v.nms_shape.max_bboxes_per_class = o.nms_max_per_class;
        v.nms_shape.order_type = HAILO_NMS_RESULT_ORDER_BY_CLASS;
    } else {
        v.shape.height = o.height;
        v.shape.width = o.width;
        v.shape.features = o.features;
    }
    v.quant_info.qp_zp = o.zp;
    v.quant_info.qp_scale = o.scale;
    return std::make_shared<HailoTensor>(buffer, v);
#endif
}

// hailofilter's per-buffer work: the main ROI, every tensor attached, the call, the tensors cleared.
HailoROIPtr run_frame(const Frames& f, size_t frame, FilterFn fn, void* params, const float* scaling) {
    HailoROIPtr roi = std::make_shared<HailoROI>(HailoBBox(0.0f, 0.0f, 1.0f, 1.0f));
    if (scaling) roi->set_scaling_bbox(HailoBBox(scaling[0], scaling[1], scaling[2], scaling[3]));
    for (const Output& o : f.outputs) roi->add_tensor(make_tensor(o, f.data(o, frame)));
    fn(roi, params);
    roi->clear_tensors();
    return roi;
}

// --- JSON ------------------------------------------------------------------------------------------
void put_float(std::ostringstream& out, double v) {
    if (std::isnan(v)) {
        out << "NaN";
    } else if (std::isinf(v)) {
        out << (v > 0 ? "Infinity" : "-Infinity");
    } else {
        char text[32];
        std::snprintf(text, sizeof text, "%.9g", v);
        out << text;
    }
}

void put_string(std::ostringstream& out, const std::string& s) {
    out << '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out << '\\' << c;
        } else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out << esc;
        } else {
            out << c;
        }
    }
    out << '"';
}

void put_bbox(std::ostringstream& out, const HailoBBox& b) {
    out << '[';
    put_float(out, b.xmin());
    out << ',';
    put_float(out, b.ymin());
    out << ',';
    put_float(out, b.width());
    out << ',';
    put_float(out, b.height());
    out << ']';
}

void put_object(std::ostringstream& out, const HailoObjectPtr& obj);

// The object as TAPPAS' class T itself, never a subclass: TAPPAS' Python module hands a class it does
// not know over as a bare HailoObject (no get_label(), ...), so a plugin's object of a subclass of
// its own breaks hailo-apps' callbacks.
template <class T>
std::shared_ptr<T> exactly(const HailoObjectPtr& obj, const char* name) {
    const HailoObject& o = *obj;
    if (typeid(o) != typeid(T))
        throw std::runtime_error(std::string("an object of type ") + typeid(o).name() + " where TAPPAS' Python module "
                                 "knows only " + name + " itself");
    return std::dynamic_pointer_cast<T>(obj);
}

void put_sub_objects(std::ostringstream& out, HailoROI& roi) {
    out << "\"objects\":[";
    bool first = true;
    for (const HailoObjectPtr& sub : roi.get_objects()) {
        if (!first) out << ',';
        first = false;
        put_object(out, sub);
    }
    out << ']';
}

void put_object(std::ostringstream& out, const HailoObjectPtr& obj) {
    switch (obj->get_type()) {
        case HAILO_DETECTION: {
            auto d = exactly<HailoDetection>(obj, "HailoDetection");
            out << "{\"type\":\"detection\",\"bbox\":";
            put_bbox(out, d->get_bbox());
            out << ",\"class_id\":" << d->get_class_id() << ",\"label\":";
            put_string(out, d->get_label());
            out << ",\"confidence\":";
            put_float(out, d->get_confidence());
            out << ',';
            put_sub_objects(out, *d);
            out << '}';
            break;
        }
        case HAILO_LANDMARKS: {
            auto l = exactly<HailoLandmarks>(obj, "HailoLandmarks");
            out << "{\"type\":\"landmarks\",\"name\":";
            put_string(out, l->get_landmarks_type());
            out << ",\"threshold\":";
            put_float(out, l->get_threshold());
            out << ",\"pairs\":[";
            bool first = true;
            for (const auto& p : l->get_pairs()) {
                out << (first ? "" : ",") << '[' << p.first << ',' << p.second << ']';
                first = false;
            }
            out << "],\"points\":[";
            first = true;
            for (const HailoPoint& p : l->get_points()) {
                out << (first ? "[" : ",[");
                put_float(out, p.x());
                out << ',';
                put_float(out, p.y());
                out << ',';
                put_float(out, p.confidence());
                out << ']';
                first = false;
            }
            out << "]}";
            break;
        }
        case HAILO_CONF_CLASS_MASK: {
            auto m = exactly<HailoConfClassMask>(obj, "HailoConfClassMask");
            out << "{\"type\":\"conf_class_mask\",\"width\":" << m->get_width() << ",\"height\":" << m->get_height()
                << ",\"transparency\":";
            put_float(out, m->get_transparency());
            out << ",\"class_id\":" << m->get_class_id() << ",\"data\":[";
            bool first = true;
            for (float v : m->get_data()) {
                if (!first) out << ',';
                put_float(out, v);
                first = false;
            }
            out << "]}";
            break;
        }
        case HAILO_USER_META: {
            auto u = exactly<HailoUserMeta>(obj, "HailoUserMeta");
            out << "{\"type\":\"user_meta\",\"int\":" << u->get_user_int() << ",\"string\":";
            put_string(out, u->get_user_string());
            out << ",\"float\":";
            put_float(out, u->get_user_float());
            out << '}';
            break;
        }
        case HAILO_CLASSIFICATION: {
            auto c = exactly<HailoClassification>(obj, "HailoClassification");
            out << "{\"type\":\"classification\",\"classification_type\":";
            put_string(out, c->get_classification_type());
            out << ",\"label\":";
            put_string(out, c->get_label());
            out << ",\"class_id\":" << c->get_class_id() << ",\"confidence\":";
            put_float(out, c->get_confidence());
            out << '}';
            break;
        }
        default:
            out << "{\"type\":\"other\",\"hailo_object_t\":" << int(obj->get_type()) << '}';
    }
}

std::string frame_json(HailoROI& roi) {
    std::ostringstream out;
    out << "{\"scaling_bbox\":";
    put_bbox(out, roi.get_scaling_bbox());
    out << ',';
    put_sub_objects(out, roi);
    out << '}';
    return out.str();
}

// --- runs ------------------------------------------------------------------------------------------
struct Plugin {
    void* handle = nullptr;
    InitFn init = nullptr;
    FreeFn free_resources = nullptr;
    AbiFn abi = nullptr;
};

Plugin load(const std::string& path) {
    Plugin p;
    p.handle = dlopen(path.c_str(), RTLD_LAZY);
    if (!p.handle) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    p.init = reinterpret_cast<InitFn>(dlsym(p.handle, "init"));
    p.free_resources = reinterpret_cast<FreeFn>(dlsym(p.handle, "free_resources"));
    p.abi = reinterpret_cast<AbiFn>(dlsym(p.handle, "hailo_decode_tappas_abi"));
    if (!p.init || !p.free_resources) throw std::runtime_error("the plugin lacks init or free_resources");
    return p;
}

// One element's life: init, dlsym, every frame `repeat` times, free_resources. Returns the JSON of
// the last pass.
// With `kept`, the last pass's ROIs are kept there (not printed) for the caller.
std::string run_element(const Plugin& plugin, const std::string& config, const std::string& function, const Frames& f,
                        int repeat, const float* scaling, std::vector<HailoROIPtr>* kept = nullptr) {
    void* params = plugin.init(config, function);
    auto fn = reinterpret_cast<FilterFn>(dlsym(plugin.handle, function.c_str()));
    if (!fn) {
        if (params) plugin.free_resources(params);
        throw std::runtime_error("Cannot load symbol " + function);
    }
    std::string json;
    for (int r = 0; r < repeat; ++r) {
        json = "[";
        if (kept) kept->clear();
        for (size_t i = 0; i < f.count; ++i) {
            HailoROIPtr roi = run_frame(f, i, fn, params, scaling);
            if (kept) kept->push_back(roi);
            else json += (i ? "," : "") + frame_json(*roi);
        }
        json += "]";
    }
    if (params) plugin.free_resources(params);
    return json;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// filter() through the loaded plugin against Decoder::decode alone (the same decoder code, linked
// here), per frame, on the same tensors.
// With `against` (another post-process .so, e.g. TAPPAS' own), its `function` too, on the same
// ROIs, the three taking turns going first.
void bench(const Plugin& plugin, const std::string& config, const std::string& function, const Frames& f, int n,
           const float* scaling, const Plugin* against = nullptr) {
    using clock = std::chrono::steady_clock;
    void* params = plugin.init(config, function);
    auto fn = reinterpret_cast<FilterFn>(dlsym(plugin.handle, function.c_str()));
    hailo_decode::tappas::FilterState reference(config, function);
    if (!fn || !params) throw std::runtime_error("bench: cannot load " + function);
    void* other_params = against ? against->init(config, function) : nullptr;
    auto other_fn = against ? reinterpret_cast<FilterFn>(dlsym(against->handle, function.c_str())) : nullptr;
    if (against && (!other_fn || !other_params)) throw std::runtime_error("bench: --against lacks " + function);
    std::vector<double> filter_us, decode_us, against_us, filter_cpu_us, against_cpu_us;
    size_t against_objects = 0;
    // The process's CPU time: a post-process that spreads a frame over threads (TAPPAS' yolov5seg
    // runs its branches on std::async) is charged for all of them.
    auto cpu_us = [] {
        timespec t{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return double(t.tv_sec) * 1e6 + double(t.tv_nsec) / 1e3;
    };
    size_t objects = 0;
    for (int round = 0; round < n; ++round) {
        for (size_t i = 0; i < f.count; ++i) {
            // The ROI and its tensors are hailofilter's work, not the plugin's: made outside the timing.
            HailoROIPtr roi = std::make_shared<HailoROI>(HailoBBox(0.0f, 0.0f, 1.0f, 1.0f));
            if (scaling) roi->set_scaling_bbox(HailoBBox(scaling[0], scaling[1], scaling[2], scaling[3]));
            for (const Output& o : f.outputs) roi->add_tensor(make_tensor(o, f.data(o, i)));
            if (!reference.prepare(*roi)) {  // its decoder, built on the first frame
                reference.filter(*roi, false);
                roi->remove_objects_typed(HAILO_DETECTION);
                if (!reference.prepare(*roi)) throw std::runtime_error("bench: the reference decoder did not take the frame");
            }
            // Whichever runs second finds the frame's tensors warm in the caches: the two take
            // turns going first.
            auto time_filter = [&] {
                const double c0 = against ? cpu_us() : 0.0;
                const auto t0 = clock::now();
                fn(roi, params);
                const auto t1 = clock::now();
                if (against) filter_cpu_us.push_back(cpu_us() - c0);
                filter_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                objects += roi->get_objects().size();
                roi->remove_objects_typed(HAILO_DETECTION);  // the objects die outside the timing, as downstream
            };
            auto time_decode = [&] {
                const auto t0 = clock::now();
                reference.decode_prepared();
                const auto t1 = clock::now();
                decode_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            };
            auto time_against = [&] {
                if (!against) return;
                const double c0 = cpu_us();
                const auto t0 = clock::now();
                other_fn(roi, other_params);
                const auto t1 = clock::now();
                against_cpu_us.push_back(cpu_us() - c0);
                against_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                against_objects += roi->get_objects().size();
                roi->remove_objects_typed(HAILO_DETECTION);
            };
            if (round % 3 == 0) {
                time_filter();
                time_decode();
                time_against();
            } else if (round % 3 == 1) {
                time_against();
                time_decode();
                time_filter();
            } else {
                time_decode();
                time_against();
                time_filter();
            }
            roi->clear_tensors();
        }
    }
    plugin.free_resources(params);
    if (against) against->free_resources(other_params);
    const double filter_median = median(filter_us), decode_median = median(decode_us);
    std::fprintf(stderr,
                 "bench: %zu frames x %d: filter() %.2f us per frame (median), Decoder::decode alone %.2f us; "
                 "plugin's own %.2f us (%+.1f %%), %.1f detections per frame\n",
                 f.count, n, filter_median, decode_median, filter_median - decode_median,
                 100.0 * (filter_median - decode_median) / decode_median, double(objects) / double(n * f.count));
    if (against) {
        const double against_median = median(against_us);
        std::fprintf(stderr, "bench: --against %s() %.2f us per frame (median), %.1f detections per frame: %.1fx the plugin's\n",
                     function.c_str(), against_median, double(against_objects) / double(n * f.count),
                     against_median / filter_median);
        std::printf("{\"filter_us\":%.3f,\"decode_us\":%.3f,\"detections_per_frame\":%.3f,\"against_us\":%.3f,"
                    "\"against_detections_per_frame\":%.3f,\"filter_cpu_us\":%.3f,\"against_cpu_us\":%.3f}\n",
                    filter_median, decode_median, double(objects) / double(n * f.count), against_median,
                    double(against_objects) / double(n * f.count), median(filter_cpu_us), median(against_cpu_us));
        return;
    }
    std::printf("{\"filter_us\":%.3f,\"decode_us\":%.3f,\"detections_per_frame\":%.3f}\n", filter_median, decode_median,
                double(objects) / double(n * f.count));
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "hailo_decode_tappas_host: %s\n", why);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::string plugin_path, config = "NULL", function = "filter", frames_path;
    bool synthetic = false, quiet = false, abi_only = false, scaled = false, dlclose_first = false;
    std::string against_path;
    int threads = 1, repeat = 1, bench_n = 0;
    float scaling[4] = {0, 0, 1, 1};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* what) -> std::string {
            if (i + 1 >= argc) usage((std::string(what) + " needs a value").c_str());
            return argv[++i];
        };
        if (a == "--plugin") plugin_path = value("--plugin");
        else if (a == "--config") config = value("--config");
        else if (a == "--function") function = value("--function");
        else if (a == "--frames") frames_path = value("--frames");
        else if (a == "--synthetic") synthetic = true;
        else if (a == "--threads") threads = std::atoi(value("--threads").c_str());
        else if (a == "--repeat") repeat = std::atoi(value("--repeat").c_str());
        else if (a == "--bench") bench_n = std::atoi(value("--bench").c_str());
        else if (a == "--against") against_path = value("--against");
        else if (a == "--quiet") quiet = true;
        else if (a == "--abi") abi_only = true;
        else if (a == "--dlclose") dlclose_first = true;
        else if (a == "--scaling") {
            for (float& v : scaling) v = std::strtof(value("--scaling").c_str(), nullptr);
            scaled = true;
        } else usage(("unknown argument " + a).c_str());
    }
    if (plugin_path.empty()) usage("--plugin is required");
    try {
        const Plugin plugin = load(plugin_path);
        if (abi_only) {
            std::printf("%s\n%s\n", plugin.abi ? plugin.abi() : "(no hailo_decode_tappas_abi)",
                        hailo_decode::tappas::abi_line());
            return 0;
        }
        if (!synthetic && frames_path.empty()) usage("give --frames DESCRIPTION or --synthetic");
        const Frames f = synthetic ? synthetic_frames() : read_description(frames_path);
        const float* scale = scaled ? scaling : nullptr;
        const std::string abi = plugin.abi ? plugin.abi() : "";  // asked before any dlclose
        if (bench_n > 0) {
            if (against_path.empty()) {
                bench(plugin, config, function, f, bench_n, scale);
            } else {
                const Plugin against = load(against_path);
                bench(plugin, config, function, f, bench_n, scale, &against);
            }
            return 0;
        }
        std::vector<std::string> results(size_t(std::max(1, threads)));
        if (dlclose_first) {
            // hailofilter's dispose: free_resources, then dlclose; the frames' objects are read
            // (virtual calls) and released only after it, as by a callback that kept them.
            std::vector<HailoROIPtr> kept;
            run_element(plugin, config, function, f, repeat, scale, &kept);
            if (dlclose(plugin.handle) != 0) throw std::runtime_error(std::string("dlclose: ") + dlerror());
            results[0] = "[";
            for (size_t i = 0; i < kept.size(); ++i) results[0] += (i ? "," : "") + frame_json(*kept[i]);
            results[0] += "]";
            kept.clear();
        } else if (threads <= 1) {
            results[0] = run_element(plugin, config, function, f, repeat, scale);
        } else {
            std::vector<std::thread> pool;
            std::vector<std::string> errors(results.size());
            for (size_t t = 0; t < results.size(); ++t)
                pool.emplace_back([&, t]() {
                    try {
                        results[t] = run_element(plugin, config, function, f, repeat, scale);
                    } catch (const std::exception& e) {
                        errors[t] = e.what();
                    }
                });
            for (std::thread& th : pool) th.join();
            for (const std::string& e : errors)
                if (!e.empty()) throw std::runtime_error(e);
        }
        for (size_t t = 1; t < results.size(); ++t)
            if (results[t] != results[0]) {
                std::fprintf(stderr, "hailo_decode_tappas_host: element %zu's objects differ from element 0's\n", t);
                return 1;
            }
        if (!quiet) std::printf("{\"abi\":\"%s\",\"frames\":%s}\n", abi.c_str(), results[0].c_str());
        // The handle stays open, as GStreamer keeps its plugins loaded.
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hailo_decode_tappas_host: %s\n", e.what());
        return 2;
    }
    return 0;
}
