// C++ unit tests of setup::pair_outputs (cpp/src/setup/pairing*.cpp), run by ctest (and by pytest
// through tests/test_cpp_core.py): heads paired by shape (detection, pose, OBB, segmentation),
// the heads given (DFL, YOLOv5, YOLOX), strides (stride x grid = input size), and every refusal,
// each checked for the words that name what is wrong.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "hailo_decode/setup.hpp"
#include "check.hpp"

using namespace hailo_decode;
using namespace hailo_decode::setup;

namespace {

const int kStrides[3] = {8, 16, 32};

OutputShape out(const std::string& name, int h, int w, int c) { return OutputShape{name, h, w, c}; }

// A 640x640 YOLOv8 detection model: box{s} (4 x bins) and cls{s} per stride 8/16/32, plus the
// extra output per grid when `extra` channels are given (kpt{s} / ang{s}).
std::vector<OutputShape> yolov8(int classes, int box_channels = 64, int extra = 0, const std::string& extra_name = "kpt") {
    std::vector<OutputShape> outs;
    for (int s : kStrides) {
        const int g = 640 / s;
        outs.push_back(out("box" + std::to_string(s), g, g, box_channels));
        outs.push_back(out("cls" + std::to_string(s), g, g, classes));
        if (extra) outs.push_back(out(extra_name + std::to_string(s), g, g, extra));
    }
    return outs;
}

NamedHead dfl(const std::string& box, const std::string& cls, int stride = 0) {
    NamedHead h;
    h.box = box;
    h.cls = cls;
    h.stride = stride;
    return h;
}

std::vector<NamedHead> dfl_heads(bool strides = true) {
    std::vector<NamedHead> heads;
    for (int s : kStrides) heads.push_back(dfl("box" + std::to_string(s), "cls" + std::to_string(s), strides ? s : 0));
    return heads;
}

Options with_task(const std::string& task, int keypoint_dims = 0) {
    Options o;
    o.task = task;
    o.keypoint_dims = keypoint_dims;
    return o;
}

bool refused(const std::vector<OutputShape>& outs, const Options& opt, const std::vector<NamedHead>* heads,
             const char* needle) {
    return throws([&] { pair_outputs(outs, opt, heads); }, needle);
}
bool refused(const std::vector<OutputShape>& outs, const std::vector<NamedHead>& heads, const char* needle) {
    return refused(outs, Options{}, &heads, needle);
}
// The message pairing refuses the outputs with ("" when it does not).
std::string message(const std::vector<OutputShape>& outs, const Options& opt) {
    try {
        pair_outputs(outs, opt);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

void test_detection_by_shape() {
    std::vector<OutputShape> outs = yolov8(80);
    std::reverse(outs.begin(), outs.end());  // order does not matter: finest grid first
    const Layout l = pair_outputs(outs, Options{});
    CHECK(l.kind == HeadKind::DFL && l.task == "detect" && l.num_classes == 80 && l.bins == 16);
    CHECK(l.image_height == 640 && l.image_width == 640 && l.proto.empty());
    CHECK(l.heads.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        const std::string s = std::to_string(kStrides[i]);
        CHECK(l.heads[i].box == "box" + s && l.heads[i].cls == "cls" + s && l.heads[i].stride == kStrides[i]);
    }
    // 4-channel boxes (YOLO26, bins 1); the image size sets the strides.
    Options big;
    big.image_height = big.image_width = 1280;
    const Layout e2e = pair_outputs(yolov8(3, 4), big);
    CHECK(e2e.bins == 1 && e2e.num_classes == 3 && e2e.heads[0].stride == 16 && e2e.image_height == 1280);
    // YOLO26 with COCO's 80 classes: 4 and 80 channels are both multiples of 4; the 4-channel box
    // (reg_max 1) is Ultralytics' other reg_max, so it is the box.
    const Layout coco26 = pair_outputs(yolov8(80, 4), Options{});
    CHECK(coco26.bins == 1 && coco26.num_classes == 80 && coco26.heads[0].box == "box8");
    // 16 channels (4 bins) and 80 classes are both multiples of 4: bins= settles it.
    CHECK(refused(yolov8(80, 16), Options{}, nullptr, "cannot tell box from class output on grid (80, 80)"));
    CHECK(refused(yolov8(80, 16), Options{}, nullptr, "(or bins=...)"));
    Options bins4;
    bins4.bins = 4;
    CHECK(pair_outputs(yolov8(80, 16), bins4).bins == 4);
    // 64 classes with 16 bins: ambiguous, and the advice names heads=.
    CHECK(refused(yolov8(64), Options{}, nullptr, "pass heads=[Head(box=..., cls=..., stride=..."));
    // Grids of one output, or of different counts.
    std::vector<OutputShape> odd = yolov8(80);
    odd.pop_back();
    CHECK(refused(odd, Options{}, nullptr, "each grid needs two (box, class) or three (box, class, kpt or angle) outputs, "
                                           "got {(80, 80): ['box8', 'cls8'], (40, 40): ['box16', 'cls16'], (20, 20): ['box32']}"));
    CHECK(refused(yolov8(80), with_task("pose"), nullptr, "each grid needs three (box, class, kpt or angle)"));
}

void test_pose_and_obb_by_shape() {
    const Layout pose = pair_outputs(yolov8(1, 64, 51), with_task("pose"));
    CHECK(pose.task == "pose" && pose.num_keypoints == 17 && pose.keypoint_dims == 3 && pose.num_classes == 1);
    CHECK(pose.heads[0].kpt == "kpt8" && pose.heads[2].kpt == "kpt32" && pose.heads[1].stride == 16);
    const Layout two = pair_outputs(yolov8(1, 64, 34), with_task("pose", 2));
    CHECK(two.num_keypoints == 17 && two.keypoint_dims == 2);
    // 80 classes and a 1-channel output fit only OBB: no task needed.
    const Layout obb = pair_outputs(yolov8(80, 64, 1, "ang"), Options{});
    CHECK(obb.task == "obb" && obb.num_classes == 80 && obb.heads[0].angle == "ang8" && obb.heads[0].kpt.empty());
    // 1 class + 51 channels: pose with 17 keypoints, or a 51-class OBB.
    CHECK(refused(yolov8(1, 64, 51), Options{}, nullptr,
                  "ambiguous: obb with 51 classes; pose with 1 class and 51 kpt channels all fit"));
    CHECK(refused(yolov8(1, 64, 51), Options{}, nullptr, "pass task='pose' or task='obb'"));
    // 3 classes and 51 channels: either could be the keypoints.
    CHECK(refused(yolov8(3, 64, 51), with_task("pose"), nullptr,
                  "ambiguous: pose with 3 classes and 51 kpt channels; pose with 51 classes and 3 kpt channels all fit"));
    // One reading, but two 1-channel outputs per grid: either could be the angle.
    CHECK(refused(yolov8(1, 64, 1, "ang"), with_task("obb"), nullptr,
                  "obb with 1 class (with two outputs of one grid that could each be either)"));
    CHECK(refused(yolov8(80, 64, 50), with_task("pose"), nullptr, "no reading as box (4 x bins), class and kpt (a multiple of 3)"));
    CHECK(refused(yolov8(80, 64, 51), with_task("segment"), nullptr, "no reading"));
}

// A 640x640 -seg model: proto (160, 160, 32) and per stride box 64, cls 80, mask coefficients.
std::vector<OutputShape> seg(int mask_channels = 32, int proto_grid = 160) {
    std::vector<OutputShape> outs{out("proto", proto_grid, proto_grid, 32)};
    for (int s : kStrides) {
        const int g = 640 / s;
        outs.push_back(out("mask" + std::to_string(s), g, g, mask_channels));
        outs.push_back(out("box" + std::to_string(s), g, g, 64));
        outs.push_back(out("cls" + std::to_string(s), g, g, 80));
    }
    return outs;
}

void test_segmentation() {
    const Layout l = pair_outputs(seg(), Options{});
    CHECK(l.task == "segment" && l.proto == "proto" && l.num_classes == 80 && l.heads.size() == 3);
    CHECK(l.heads[0].mask == "mask8" && l.heads[0].box == "box8" && l.heads[0].cls == "cls8" && l.heads[2].stride == 32);
    // Not a -seg model by shape: a detection model stays one; task detect does not look.
    CHECK(pair_outputs(yolov8(80), Options{}).proto.empty());
    CHECK(refused(seg(), with_task("detect"), nullptr, "each grid needs two (box, class) outputs"));
    // The prototype named; its grid against image_size / proto_stride.
    Options named;
    named.proto = "proto";
    CHECK(pair_outputs(seg(), named).proto == "proto");
    CHECK(refused(seg(32, 80), named, nullptr, "'proto': prototype grid (80, 80) is not image_size / 4 = (160, 160)"));
    named.proto_stride = 0;  // not checked
    CHECK(pair_outputs(seg(32, 80), named).heads.size() == 3);
    named.proto = "nope";
    CHECK(refused(seg(), named, nullptr, "proto output 'nope' is not among the outputs"));
    // Mask outputs of 80 channels: none has the prototype's 32.
    Options p;
    p.proto = "proto";
    CHECK(refused(seg(80), p, nullptr, "cannot tell the mask coefficient output on grid (80, 80)"));
    std::vector<OutputShape> short_grid = seg();
    short_grid.pop_back();
    CHECK(refused(short_grid, p, nullptr, "cannot pair segmentation outputs by shape: each grid needs a box, a class and a mask"));
    // Heads given: masks against the prototype.
    std::vector<NamedHead> heads = dfl_heads();
    for (size_t i = 0; i < 3; ++i) heads[i].mask = "mask" + std::to_string(kStrides[i]);
    CHECK(pair_outputs(seg(), p, &heads).task == "segment");
    CHECK(refused(seg(), Options{}, &heads, "head mask output 'mask8' needs the prototype output: pass proto="));
    std::vector<NamedHead> lacking = heads;
    lacking[1].mask.clear();
    CHECK(refused(seg(), p, &lacking, "every head needs its mask coefficient output; heads with box outputs ['box16'] have none"));
    CHECK(refused(seg(16), p, &heads, "'mask8': 16 mask coefficients, but the prototype output 'proto' has 32"));
    std::vector<NamedHead> with_kpt = heads;
    with_kpt[0].kpt = "mask16";
    CHECK(refused(seg(), p, &with_kpt, "not two of them"));
}

void test_heads_given() {
    const std::vector<NamedHead> heads = dfl_heads();
    const Layout l = pair_outputs(yolov8(80), Options{}, &heads);
    CHECK(l.heads.size() == 3 && l.heads[0].box == "box8" && l.image_height == 640);
    // Heads in the order given, strides derived from the finest grid (stride 8).
    std::vector<NamedHead> reversed = dfl_heads(false);
    std::reverse(reversed.begin(), reversed.end());
    const Layout r = pair_outputs(yolov8(80), Options{}, &reversed);
    CHECK(r.heads[0].box == "box32" && r.heads[0].stride == 32 && r.heads[2].stride == 8);

    const std::vector<OutputShape> outs = yolov8(80);
    CHECK(refused(outs, {}, "heads must not be empty"));
    std::vector<NamedHead> bad = heads;
    bad[0].box = "nope";
    CHECK(refused(outs, bad, "head box output 'nope' is not among the outputs ['box8', 'cls8'"));
    bad = heads;
    bad[0].kpt = "nope";
    CHECK(refused(outs, bad, "head kpt output 'nope' is not among the outputs"));
    bad = heads;
    bad[1].cls = "cls8";
    CHECK(refused(outs, bad, "an output is used by more than one head: ['box8', 'cls8', 'box16', 'cls8', 'box32', 'cls32']"));
    CHECK(refused(outs, {heads[0], heads[1]}, "outputs ['box32', 'cls32'] belong to no head; remove them or add heads"));
    // Channels: 4 x bins, one count on every head, bins= agreeing.
    const std::vector<OutputShape> b30{out("b", 4, 4, 30), out("c", 4, 4, 3)};
    CHECK(refused(b30, {dfl("b", "c", 8)}, "box output 'b' has 30 channels, not 4 x bins"));
    std::vector<OutputShape> mixed = outs;
    mixed[2].channels = 16;
    CHECK(refused(mixed, heads, "all heads must share box channels and class count; got box channels [16, 64], class channels [80]"));
    Options bins8;
    bins8.bins = 8;
    CHECK(refused(outs, bins8, &heads, "bins=8 but box outputs have 64 channels (= 4 x 16)"));
    const std::vector<OutputShape> grids{out("b", 4, 4, 64), out("c", 5, 4, 3)};
    CHECK(refused(grids, {dfl("b", "c", 8)}, "head ('b', 'c'): grids differ, (4, 4) vs (5, 4)"));
    // Outputs themselves.
    std::vector<OutputShape> dup = outs;
    dup[1].name = "box8";
    CHECK(refused(dup, Options{}, nullptr, "output names must be unique, repeated: ['box8']"));
    CHECK(refused({out("z", 0, 4, 4)}, Options{}, nullptr, "output 'z': shape (0, 4, 4) must be positive"));
    CHECK(refused({}, Options{}, nullptr, "outputs must not be empty"));
    CHECK(refused(outs, with_task("keypoints"), nullptr, "task must be one of"));
    CHECK(refused(outs, with_task("pose", 4), nullptr, "keypoint_dims must be 2 (x, y) or 3"));
}

void test_task_outputs_given() {
    const std::vector<OutputShape> outs = yolov8(1, 64, 51);
    std::vector<NamedHead> heads = dfl_heads();
    for (size_t i = 0; i < 3; ++i) heads[i].kpt = "kpt" + std::to_string(kStrides[i]);
    const Layout l = pair_outputs(outs, Options{}, &heads);
    CHECK(l.task == "pose" && l.num_keypoints == 17);
    std::vector<NamedHead> bad = heads;
    bad[1].kpt.clear();
    CHECK(refused(outs, bad, "every head needs a kpt output when one has it; heads with box outputs ['box16'] have none"));
    bad = heads;
    for (auto& h : bad) h.angle = "cls8";
    CHECK(refused(outs, bad, "a head has either a kpt (pose) or an angle (OBB) output, not both"));
    CHECK(refused(outs, with_task("obb"), &heads, "task='obb' needs an angle output on every head; the heads describe 'pose'"));
    CHECK(refused(yolov8(80), with_task("segment"), nullptr, "task='segment' needs a mask output (and proto=)"));
    CHECK(refused(outs, with_task("pose", 2), &heads, "kpt output 'kpt8': 51 channels is not a multiple of 2 (x, y per keypoint)"));
    CHECK(refused(yolov8(1, 64, 50), heads, "50 channels is not a multiple of 3 (x, y, visibility per keypoint); pass keypoint_dims=2"));
    std::vector<OutputShape> uneven = outs;
    uneven[5].channels = 34;
    CHECK(refused(uneven, heads, "all kpt outputs must have the same channels, got {'kpt8': 51, 'kpt16': 34, 'kpt32': 51}"));
    std::vector<OutputShape> off_grid = outs;
    off_grid[2].height = 40;
    CHECK(refused(off_grid, heads, "kpt output 'kpt8': grid (40, 80) differs from its head's box output 'box8' grid (80, 80)"));
    // OBB: the angle is one channel.
    std::vector<NamedHead> obb = dfl_heads();
    for (size_t i = 0; i < 3; ++i) obb[i].angle = "ang" + std::to_string(kStrides[i]);
    CHECK(pair_outputs(yolov8(15, 64, 1, "ang"), Options{}, &obb).task == "obb");
    CHECK(refused(yolov8(15, 64, 2, "ang"), obb, "angle output 'ang8': expected 1 channel (the angle logit), got 2"));
}

NamedHead anchor_head(const std::string& tensor, int stride, std::vector<std::pair<int, int>> anchors) {
    NamedHead h;
    h.kind = HeadKind::YOLOV5;
    h.box = tensor;
    h.stride = stride;
    h.anchors = std::move(anchors);
    return h;
}

NamedHead yolox_head(int s, int stride) {
    NamedHead h;
    h.kind = HeadKind::YOLOX;
    h.box = "reg" + std::to_string(s);
    h.obj = "obj" + std::to_string(s);
    h.cls = "cls" + std::to_string(s);
    h.stride = stride;
    return h;
}

std::vector<OutputShape> v5_outputs(int channels = 255) {
    std::vector<OutputShape> outs;
    for (int s : kStrides) outs.push_back(out("t" + std::to_string(s), 640 / s, 640 / s, channels));
    return outs;
}

std::vector<OutputShape> yolox_outputs(int classes = 80) {
    std::vector<OutputShape> outs;
    for (int s : kStrides) {
        const int g = 640 / s;
        outs.push_back(out("reg" + std::to_string(s), g, g, 4));
        outs.push_back(out("obj" + std::to_string(s), g, g, 1));
        outs.push_back(out("cls" + std::to_string(s), g, g, classes));
    }
    return outs;
}

void test_yolov5_and_yolox() {
    const std::vector<std::pair<int, int>> anchors{{10, 13}, {16, 30}, {33, 23}};
    std::vector<NamedHead> v5;
    for (int s : kStrides) v5.push_back(anchor_head("t" + std::to_string(s), s, anchors));
    const Layout l = pair_outputs(v5_outputs(), Options{}, &v5);
    CHECK(l.kind == HeadKind::YOLOV5 && l.num_classes == 80 && l.bins == 0 && l.task == "detect" && l.image_height == 640);
    CHECK(l.heads[0].cls == "t8" && l.heads[0].anchors.size() == 3);
    v5[0].stride = 0;  // derived from the others' size
    CHECK(pair_outputs(v5_outputs(), Options{}, &v5).heads[0].stride == 8);
    std::vector<NamedHead> bad = v5;
    bad[0].anchors.push_back({1, 1});
    CHECK(refused(v5_outputs(), bad, "output 't8': 255 channels do not hold 4 anchors x (5 + classes)"));
    bad = v5;
    bad[1].anchors.clear();
    CHECK(refused(v5_outputs(), bad, "anchor head 't16': at least one anchor (w, h) is needed"));
    bad = v5;
    bad[1].anchors[0] = {0, 13};
    CHECK(refused(v5_outputs(), bad, "anchor head 't16': anchors must be positive whole pixels, got (0, 13)"));
    bad = v5;
    bad[2].anchors = {{1, 1}};  // 255 = 1 x (5 + 250)
    CHECK(refused(v5_outputs(), bad, "all heads must share the class count; got [80, 250]"));
    CHECK(refused(v5_outputs(), {v5[0], v5[1]}, "outputs ['t32'] belong to no head"));
    bad = v5;
    bad[0].box = "nope";
    CHECK(refused(v5_outputs(), bad, "head tensor output 'nope' is not among the outputs"));
    CHECK(refused(v5_outputs(), with_task("pose"), &v5, "yolov5 heads are detection heads: no task='pose' or proto= for them"));
    std::vector<NamedHead> mix{v5[0], dfl("t16", "t32")};
    CHECK(refused(v5_outputs(), mix, "heads mix head families ['dfl', 'yolov5']"));

    std::vector<NamedHead> x;
    for (int s : kStrides) x.push_back(yolox_head(s, s));
    const Layout lx = pair_outputs(yolox_outputs(), Options{}, &x);
    CHECK(lx.kind == HeadKind::YOLOX && lx.num_classes == 80 && lx.heads[1].obj == "obj16" && lx.heads[2].stride == 32);
    Options p;
    p.proto = "cls8";
    CHECK(refused(yolox_outputs(), p, &x, "yolox heads are detection heads: no task=None or proto= for them"));
    std::vector<OutputShape> outs = yolox_outputs();
    outs[0].channels = 5;
    CHECK(refused(outs, x, "output 'reg8': YOLOX reg must have 4 channels, got 5"));
    outs = yolox_outputs();
    outs[1].channels = 2;
    CHECK(refused(outs, x, "output 'obj8': YOLOX objectness must have 1 channel, got 2"));
    outs = yolox_outputs();
    outs[2].width = 40;
    CHECK(refused(outs, x, "output 'cls8': grid (80, 40) differs from reg 'reg8' (80, 80)"));
    bad = x;
    bad[0].obj = "nope";
    CHECK(refused(yolox_outputs(), bad, "head obj output 'nope' is not among the outputs"));
}

void test_family_hints() {
    // One tensor per grid: YOLOv5/YOLOv7 anchor heads, their anchors not in the tensors.
    CHECK(refused(v5_outputs(), Options{}, nullptr, "3 anchors x (5 + 80 classes) = 255 channels"));
    CHECK(refused(v5_outputs(), Options{}, nullptr, "{(80, 80): ['t8 (255 ch)'], (40, 40): ['t16 (255 ch)']"));
    CHECK(refused(v5_outputs(85), Options{}, nullptr, "1 anchor x (5 + 80 classes) = 85 channels"));
    CHECK(refused(v5_outputs(21), Options{}, nullptr, "AnchorHead(output, anchors=((w, h), ...), stride=...)"));
    CHECK(refused(v5_outputs(4), Options{}, nullptr, "each grid needs two (box, class) or three"));
    // 4, 1 and nc per grid: YOLOX, or YOLO26's end-to-end OBB head.
    CHECK(refused(yolox_outputs(), Options{}, nullptr, "look like YOLOX heads (reg, objectness, 80 classes)"));
    CHECK(refused(yolox_outputs(), Options{}, nullptr, "task='obb', bins=1 (or heads=[Head(box, cls, angle=...), ...]) with "
                                                       "end2end=True, angle_decode='raw'"));
    CHECK(refused(yolox_outputs(4), Options{}, nullptr, "a 1-channel angle): heads=[Head(box, cls, angle=...), ...] with"));
    CHECK(refused(yolox_outputs(), with_task("detect"), nullptr, "YoloxHead(reg, obj, cls, stride=...), ...]"));
    const std::string detect = message(yolox_outputs(), with_task("detect"));
    CHECK(detect.find("YOLOX heads") != std::string::npos && detect.find("YOLO26") == std::string::npos);
    // The reading the hint names works: task obb, bins 1.
    Options obb = with_task("obb");
    obb.bins = 1;
    const Layout l = pair_outputs(yolox_outputs(), obb);
    CHECK(l.task == "obb" && l.bins == 1 && l.heads[0].box == "reg8" && l.heads[0].angle == "obj8" && l.heads[0].cls == "cls8");
}

void test_strides_fit_the_image() {
    // stride x grid = image size, given or derived (issue 28).
    const std::vector<OutputShape> outs = yolov8(80);
    std::vector<NamedHead> wrong = dfl_heads();
    wrong[0].stride = 16;  // the 80x80 head: 1280, not 640
    Options size;
    size.image_height = size.image_width = 640;
    CHECK(refused(outs, size, &wrong, "head ('box8', 'cls8'): stride 16 x grid (80, 80) is (1280, 1280), not the image size "
                                      "(640, 640); stride x grid must equal the image size on every head (this head's "
                                      "stride would be 8)"));
    // Without image_size, the first stride given sets it.
    CHECK(refused(outs, Options{}, &wrong, "head ('box16', 'cls16'): stride 16 x grid (40, 40) is (640, 640), not the image "
                                           "size (1280, 1280) (from head ('box8', 'cls8')'s stride 16 x grid (80, 80))"));
    std::vector<NamedHead> some = dfl_heads(false);
    some[1].stride = 16;
    CHECK(pair_outputs(outs, Options{}, &some).heads[0].stride == 8);
    some[1].stride = 7;  // image 280: no stride of the 80x80 head fits it
    CHECK(refused(outs, Options{}, &some, "head ('box8', 'cls8'): grid (80, 80) does not divide image_size (280, 280) (from head "
                                          "('box16', 'cls16')'s stride 7 x grid (40, 40)) into one stride"));
    // Non-square: one stride on both axes.
    Options wide;
    wide.image_height = 480;
    wide.image_width = 640;
    CHECK(refused(outs, wide, &wrong, "no stride fits grid (80, 80) in it"));
    const std::vector<OutputShape> rect{out("b", 60, 80, 64), out("c", 60, 80, 2)};
    CHECK(pair_outputs(rect, wide, nullptr).heads[0].stride == 8);
    const std::vector<NamedHead> rect_head{dfl("b", "c", 8)};
    CHECK(pair_outputs(rect, wide, &rect_head).image_width == 640);
    // YOLOv5 and YOLOX heads go through the same rule.
    std::vector<NamedHead> v5;
    for (int s : kStrides) v5.push_back(anchor_head("t" + std::to_string(s), s == 32 ? 16 : s, {{10, 13}}));
    CHECK(refused(v5_outputs(), v5, "anchor head 't32': stride 16 x grid (20, 20) is (320, 320), not the image size (640, 640)"));
    std::vector<NamedHead> x;
    for (int s : kStrides) x.push_back(yolox_head(s, s == 8 ? 16 : s));
    CHECK(refused(yolox_outputs(), size, &x, "YOLOX head ('reg8', 'obj8', 'cls8'): stride 16 x grid (80, 80)"));
    // The image size given must be divided by every grid when strides are derived.
    Options hundred;
    hundred.image_height = hundred.image_width = 100;
    CHECK(refused(outs, hundred, nullptr, "head ('box8', 'cls8'): grid (80, 80) does not divide image_size (100, 100) into one stride"));
    // Ranges: the core's 32-bit sizes.
    Options zero;
    zero.image_width = 640;
    CHECK(refused(outs, zero, nullptr, "image_size must be positive and at most 1048576 a side, got (0, 640)"));
    Options huge;
    huge.image_height = huge.image_width = (1 << 20) + 1;
    CHECK(refused(outs, huge, nullptr, "image_size must be positive and at most 1048576 a side"));
    std::vector<NamedHead> negative = dfl_heads();
    negative[2].stride = -32;
    CHECK(refused(outs, negative, "head ('box32', 'cls32'): stride must be positive and at most 1048576, got -32"));
}

}  // namespace

int main() {
    test_detection_by_shape();
    test_pose_and_obb_by_shape();
    test_segmentation();
    test_heads_given();
    test_task_outputs_given();
    test_yolov5_and_yolox();
    test_family_hints();
    test_strides_fit_the_image();
    return report();
}
