// C++ unit tests of setup::read_heads (cpp/src/setup/heads_json.cpp), the heads a config file
// names ("heads", read for the TAPPAS plugin and Python's DecoderConfig(heads=[{...}])), and of
// pairing's advice in the words of who asks (Options::wording, cpp/src/setup/pairing_advice.cpp):
// a config file's reader is told its keys, never a Python call.
#include <string>
#include <vector>

#include "check.hpp"
#include "hailo_decode/json.hpp"
#include "hailo_decode/setup.hpp"

using namespace hailo_decode;
using namespace hailo_decode::setup;

namespace {

std::vector<OutputShape> obb_one_class() {  // box 64, class 1, angle 1 on each grid: shapes cannot tell
    std::vector<OutputShape> outs;
    for (int s : {8, 16, 32}) {
        const int g = 640 / s;
        outs.push_back({"box" + std::to_string(s), g, g, 64});
        outs.push_back({"cls" + std::to_string(s), g, g, 1});
        outs.push_back({"ang" + std::to_string(s), g, g, 1});
    }
    return outs;
}

std::vector<NamedHead> heads(const std::string& text, const std::vector<OutputShape>* outputs = nullptr) {
    return read_heads(json::parse(text), "cfg.json", outputs);
}

// The message of what `f` throws ("" when it does not).
template <typename F>
std::string message(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

bool has(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return true;
    std::printf("  '%s' not in: %s\n", part.c_str(), text.c_str());
    return false;
}

bool is_type_error(const std::string& text) {
    try {
        heads(text);
    } catch (const type_error&) {
        return true;
    } catch (...) {
    }
    return false;
}

void reads_each_family() {
    const auto dfl = heads(R"([{"box": "box8", "cls": "cls8", "stride": 8, "angle": "ang8"}, {"box": "box16", "cls": "cls16", "angle": "ang16"}])");
    CHECK(dfl.size() == 2 && dfl[0].kind == HeadKind::DFL && dfl[0].box == "box8" && dfl[0].cls == "cls8" &&
          dfl[0].angle == "ang8" && dfl[0].stride == 8 && dfl[1].stride == 0 && dfl[1].kpt.empty());
    const auto v5 = heads(R"([{"output": "conv55", "anchors": [[10, 13], [16, 30]], "stride": 8}])");
    CHECK(v5[0].kind == HeadKind::YOLOV5 && v5[0].box == "conv55" && v5[0].cls == "conv55" &&
          v5[0].anchors == (std::vector<std::pair<int, int>>{{10, 13}, {16, 30}}) && v5[0].stride == 8);
    const auto x = heads(R"([{"reg": "r", "obj": "o", "cls": "c", "stride": null}])");
    CHECK(x[0].kind == HeadKind::YOLOX && x[0].box == "r" && x[0].obj == "o" && x[0].cls == "c" && x[0].stride == 0);
}

void refuses_with_the_key() {
    const std::vector<OutputShape> outs = obb_one_class();
    CHECK(is_type_error(R"({"box": "a"})"));
    CHECK(has(message([] { heads("[]"); }), "cfg.json: heads must not be empty"));
    CHECK(is_type_error(R"([{"box": "a", "clss": "b"}])"));
    CHECK(has(message([] { heads(R"([{"box": "a", "clss": "b"}])"); }), "heads[0]: unknown key \"clss\"; did you mean \"cls\"?"));
    CHECK(is_type_error(R"([{"box": 3, "cls": "b"}])"));
    CHECK(has(message([] { heads(R"([{"box": 3, "cls": "b"}])"); }), "heads[0].box must be an output name (a string), got 3"));
    CHECK(has(message([] { heads(R"([{"box": "a"}])"); }), "heads[0]: \"cls\" (an output name) is missing"));
    CHECK(has(message([] { heads(R"([{"box": "a", "cls": "b", "angle": "c", "kpt": "d"}])"); }), "at most one of"));
    CHECK(has(message([] { heads(R"([{"box": "a", "cls": "b", "reg": "c"}])"); }), "keys of different head kinds"));
    CHECK(has(message([] { heads(R"([{"output": "a", "anchors": [[1, 2]], "cls": "b"}])"); }), "has no \"cls\""));
    CHECK(has(message([] { heads(R"([{"box": "a", "cls": "b"}, {"reg": "r", "obj": "o", "cls": "c"}])"); }),
              "heads[0] is a DFL head (\"box\", \"cls\"), heads[1] a YOLOX head"));
    CHECK(has(message([] { heads(R"([{"box": "a", "cls": "b", "stride": 0}])"); }), "heads[0].stride must be a positive integer"));
    CHECK(has(message([] { heads(R"([{"box": "a", "cls": "b", "stride": 8.5}])"); }), "heads[0].stride"));
    CHECK(is_type_error(R"([{"box": "a", "cls": "b", "stride": "8"}])"));
    CHECK(has(message([] { heads(R"([{"output": "a"}])"); }), "\"anchors\""));
    CHECK(has(message([] { heads(R"([{"output": "a", "anchors": [[10, -1]]}])"); }), "heads[0].anchors[0][1] (h)"));
    CHECK(has(message([] { heads(R"([{"output": "a", "anchors": [[10]]}])"); }), "heads[0].anchors[0] must be a [w, h] pair"));
    CHECK(has(message([&] { heads(R"([{"box": "box8", "cls": "cls_8", "angle": "ang8"}])", &outs); }),
              "heads[0].cls: 'cls_8' is not among the outputs"));
    CHECK(has(message([&] { heads(R"([{"box": "box8", "cls": "cls_8", "angle": "ang8"}])", &outs); }), "did you mean 'cls8'?"));
    // One line, whatever the names hold (found by tests/fuzz/test_fuzz_setup.py: a name with a
    // newline was written as it is); control characters are escaped as Python's repr escapes them.
    CHECK(message([] { heads("[{\"box\": \"a\\nb\", \"cls\": 1}]"); }).find('\n') == std::string::npos);
    const std::string odd = message([&] { heads("[{\"box\": \"a\\nb\\u0001\", \"cls\": \"cls8\"}]", &outs); });
    CHECK(odd.find('\n') == std::string::npos && has(odd, "heads[0].box: 'a\\nb\\x01' is not among the outputs"));
}

// A one-class OBB model: pairing by shape cannot tell the class from the angle output (both 1
// channel); named heads pair it.
void one_class_obb_pairs_with_named_heads() {
    const std::vector<OutputShape> outs = obb_one_class();
    Options o;
    o.task = "obb";
    std::string text = "[";
    for (int s : {8, 16, 32}) {
        const std::string n = std::to_string(s);
        text += std::string(s == 8 ? "" : ", ") + "{\"box\": \"box" + n + "\", \"cls\": \"cls" + n + "\", \"angle\": \"ang" + n +
                "\", \"stride\": " + n + "}";
    }
    const std::vector<NamedHead> named = heads(text + "]", &outs);
    const Layout lay = pair_outputs(outs, o, &named);
    CHECK(lay.task == "obb" && lay.num_classes == 1 && lay.bins == 16 && lay.heads.size() == 3 && lay.heads[2].angle == "ang32");
    CHECK(has(message([&] { pair_outputs(outs, o); }), "it is ambiguous"));
}

// The same refusal in Python's words and in a config file's: the file's reader is pointed at its keys.
void advice_in_the_words_of_who_asks() {
    const std::vector<OutputShape> outs = obb_one_class();
    Options py, file;
    py.task = file.task = "obb";
    file.wording = Wording::ConfigFile;
    const std::string a = message([&] { pair_outputs(outs, py); }), b = message([&] { pair_outputs(outs, file); });
    CHECK(has(a, "heads=[Head(") && has(a, "DecoderConfig.from_nms_json"));
    CHECK(has(b, "\"heads\": [{\"box\": ...") && has(b, "\"nms_json\""));
    for (const char* python : {"Head(", "heads=", "task=", "from_nms_json", "DecoderConfig", "pass "})
        CHECK(b.find(python) == std::string::npos);
    // task is given: the advice does not ask for it again (in either wording).
    CHECK(a.find("task=") == std::string::npos && b.find("\"task\"") == std::string::npos);

    // Other refusals a config can meet: 64 classes with 16 bins, YOLOv5 / YOLOX shapes, a mask
    // output without its prototype, a wrong task.
    std::vector<OutputShape> square, v5, x;
    for (int s : {8, 16, 32}) {
        const int g = 640 / s;
        const std::string n = std::to_string(s);
        square.push_back({"box" + n, g, g, 64});
        square.push_back({"cls" + n, g, g, 64});
        v5.push_back({"conv" + n, g, g, 255});
        x.push_back({"reg" + n, g, g, 4});
        x.push_back({"obj" + n, g, g, 1});
        x.push_back({"cls" + n, g, g, 80});
    }
    Options plain;
    plain.wording = Wording::ConfigFile;
    const std::string sq = message([&] { pair_outputs(square, plain); });
    CHECK(has(sq, "cannot tell box from class output") && has(sq, "\"heads\"") && has(sq, "\"bins\""));
    const std::string anchors = message([&] { pair_outputs(v5, plain); });
    CHECK(has(anchors, "\"nms_json\"") && has(anchors, "\"heads\": [{\"output\": ..., \"anchors\""));
    const std::string yolox = message([&] { pair_outputs(x, plain); });
    CHECK(has(yolox, "\"heads\": [{\"reg\": ...") && has(yolox, "\"end2end\": true") && has(yolox, "\"angle_decode\": \"raw\""));
    Options pose = plain;
    pose.task = "pose";
    const std::vector<NamedHead> named = heads(R"([{"box": "box8", "cls": "cls8"}, {"box": "box16", "cls": "cls16"}, {"box": "box32", "cls": "cls32"}])");
    const std::string task = message([&] { pair_outputs(square, pose, &named); });
    CHECK(has(task, "\"task\": \"pose\" needs a kpt output"));
    const std::vector<NamedHead> masked = heads(R"([{"box": "box8", "cls": "cls8", "mask": "m8"}])");
    std::vector<OutputShape> seg = {{"box8", 80, 80, 64}, {"cls8", 80, 80, 80}, {"m8", 80, 80, 32}};
    CHECK(has(message([&] { pair_outputs(seg, plain, &masked); }), "name it in \"proto\""));
    for (const std::string& m : {sq, anchors, yolox, task})
        for (const char* python : {"Head(", "heads=", "from_nms_json", "from_hef", "task=", "bins=", "end2end="})
            CHECK(m.find(python) == std::string::npos);
}

}  // namespace

int main() {
    reads_each_family();
    refuses_with_the_key();
    one_class_obb_pairs_with_named_heads();
    advice_in_the_words_of_who_asks();
    return report();
}
