// Benchmark-only driver of HailoRT 4.23's own ssd op, compiled from its public source
// (libhailort/src/net_flow/ops/ssd_post_process.cpp and nms_post_process.cpp, with stubs for its
// logger: stubs/). Never linked into hailo-decode; benchmarks/ssd_bench.py builds and runs it.
//
//   ssd_op_bench CASE_DIR ITERATIONS
// CASE_DIR holds case.txt (one line per reg/cls pair: reg_name cls_name H W anchors, then the
// anchors' w h; a header line: classes background(-1|index) score_th iou_th max_per_class
// centers_scale dims_scale dtype_bytes reg_zp reg_scale cls_zp cls_scale) and one raw NHCW file per
// output (<name>.bin, '/' written as '_'). Writes the op's HAILO_NMS_BY_CLASS frame to frame.bin
// and prints the seconds of each execute() call, one a line.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "net_flow/ops/ssd_post_process.hpp"

using namespace hailort;
using namespace hailort::net_flow;

static std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

static std::string file_name(std::string n) {
    for (char& c : n)
        if (c == '/') c = '_';
    return n;
}

int main(int argc, char** argv) {
    if (argc != 3) { std::cerr << "usage: ssd_op_bench CASE_DIR ITERATIONS\n"; return 2; }
    const std::string dir = argv[1];
    const int iterations = std::stoi(argv[2]);
    std::ifstream txt(dir + "/case.txt");
    uint32_t classes, mpc, cs, ds, dbytes;
    int background;
    double score_th, iou_th;
    float rzp, rscale, czp, cscale;
    txt >> classes >> background >> score_th >> iou_th >> mpc >> cs >> ds >> dbytes >> rzp >> rscale >> czp >> cscale;
    NmsPostProcessConfig nms(score_th, iou_th, mpc, 0, classes, background >= 0, background >= 0 ? uint32_t(background) : 0);
    SSDPostProcessConfig ssd{};
    ssd.image_height = 300;
    ssd.image_width = 300;
    ssd.centers_scale_factor = cs;
    ssd.bbox_dimensions_scale_factor = ds;
    ssd.ty_index = 0; ssd.tx_index = 1; ssd.th_index = 2; ssd.tw_index = 3;
    std::unordered_map<std::string, BufferMetaData> inputs_md, outputs_md;
    std::vector<std::pair<std::string, std::vector<uint8_t>>> buffers;
    const hailo_format_type_t type = dbytes == 1 ? HAILO_FORMAT_TYPE_UINT8 : HAILO_FORMAT_TYPE_UINT16;
    std::string reg, cls;
    uint32_t h, w, na;
    while (txt >> reg >> cls >> h >> w >> na) {
        std::vector<float> anchors(2 * na);
        for (auto& a : anchors) txt >> a;
        ssd.anchors[reg] = anchors;
        ssd.anchors[cls] = anchors;
        ssd.reg_to_cls_inputs[reg] = cls;
        for (const auto& [name, ch, zp, scale] : {std::tuple<std::string, uint32_t, float, float>{reg, 4 * na, rzp, rscale},
                                                  {cls, na * classes, czp, cscale}}) {
            BufferMetaData md{};
            md.shape = {h, w, ch};
            md.padded_shape = {h, w, ch};
            md.format = {type, HAILO_FORMAT_ORDER_NHCW, HAILO_FORMAT_FLAGS_NONE};
            md.quant_info = {zp, scale, 0.0f, 0.0f};
            inputs_md[name] = md;
            buffers.emplace_back(name, read_file(dir + "/" + file_name(name) + ".bin"));
        }
    }
    const uint32_t out_classes = classes - (background >= 0 ? 1 : 0);
    BufferMetaData out_md{};
    out_md.format = {HAILO_FORMAT_TYPE_FLOAT32, HAILO_FORMAT_ORDER_HAILO_NMS_BY_CLASS, HAILO_FORMAT_FLAGS_NONE};
    outputs_md["nms"] = out_md;
    auto md = SSDOpMetadata::create(inputs_md, outputs_md, nms, ssd, "net");
    if (!md) { std::cerr << "SSDOpMetadata::create failed: " << md.status() << "\n"; return 1; }
    auto op = SSDPostProcessOp::create(std::static_pointer_cast<SSDOpMetadata>(md.value()));
    if (!op) { std::cerr << "SSDPostProcessOp::create failed: " << op.status() << "\n"; return 1; }
    std::map<std::string, MemoryView> inputs;
    for (auto& [name, b] : buffers) inputs.emplace(name, MemoryView(b.data(), b.size()));
    std::vector<uint8_t> frame(size_t(out_classes) * (4 + size_t(mpc) * 20) + 64, 0);
    std::map<std::string, MemoryView> outputs;
    outputs.emplace("nms", MemoryView(frame.data(), frame.size() - 64));
    std::vector<double> times;
    for (int i = 0; i < iterations; ++i) {
        std::fill(frame.begin(), frame.end(), 0);
        const auto t0 = std::chrono::steady_clock::now();
        const hailo_status st = op.value()->execute(inputs, outputs);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (st != HAILO_SUCCESS) { std::cerr << "execute failed: " << int(st) << "\n"; return 1; }
    }
    std::ofstream(dir + "/frame.bin", std::ios::binary).write(reinterpret_cast<const char*>(frame.data()),
                                                              std::streamsize(frame.size() - 64));
    for (double t : times) std::printf("%.9f\n", t);
    return 0;
}
