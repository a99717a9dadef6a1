// The pieces of setup::pair_outputs (pairing.cpp), one job a file: grouping and pairing by shape
// (pairing_by_shape.cpp), the hints naming other head families (pairing_hints.cpp), the checks of
// the heads' outputs (pairing_checks.cpp), YOLOv5 / YOLOX heads (pairing_families.cpp), strides
// and the input size (pairing_strides.cpp), the rendering of names in messages
// (pairing_text.cpp) and the advice in the asker's words (pairing_advice.cpp). Private to the
// core (and the Python binding, which checks a head's stride from Python with check_stride before
// it narrows to int).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hailo_decode/setup.hpp"

namespace hailo_decode::setup::detail {

// No network input is this large; the core holds sizes and strides as 32-bit integers.
constexpr int64_t kMaxImageSide = int64_t(1) << 20;

using ByName = std::unordered_map<std::string, const OutputShape*>;
using Outputs = std::vector<const OutputShape*>;

// The outputs of one grid, in the order of the outputs given.
struct GridGroup {
    int height = 0, width = 0;
    Outputs outputs;
};
// Groups in the order their grids first appear.
std::vector<GridGroup> group_by_grid(const Outputs& outputs);
// The same, largest grid (finest) first; grids of one area keep their order.
std::vector<GridGroup> finest_first(std::vector<GridGroup> groups);

// --- text (pairing_text.cpp): names as the Python package prints them -----------------------
std::string quoted(const std::string& s);                       // 'name'
std::string task_text(const std::string& task);                 // 'pose', or None when not given
std::string grid_text(int height, int width);                   // (80, 80)
std::string names_text(const std::vector<std::string>& names);  // ['a', 'b']
std::string ints_text(const std::vector<int>& values);          // [64, 80]
// ['a', 'b']; with_channels: ['a (64 ch)', 'b (80 ch)'].
std::string outputs_text(const Outputs& outputs, bool with_channels);
// {(80, 80): ['a', 'b'], (40, 40): [...]}, the outputs as outputs_text writes them.
std::string groups_text(const std::vector<GridGroup>& groups, bool with_channels);
// head ('box', 'cls'); YOLOX head ('reg', 'obj', 'cls'); anchor head 'tensor'.
std::string head_text(const NamedHead& head);
// "class" or "classes" after n.
std::string plural(int n, const std::string& one, const std::string& many);

// --- advice (pairing_advice.cpp): what to set, in the words of who asks ----------------------
// Python: keywords and classes (task='obb', heads=[Head(...)]); a config file: its keys
// ("task": "obb", "heads": [{...}]). The TAPPAS plugin's messages never name a Python call.
// key=value: task='obb' / "task": "obb" (py_value and json_value as each writes the value).
std::string setting_text(Wording w, const std::string& key, const std::string& py_value, const std::string& json_value);
// The key alone: proto= / "proto".
std::string key_text(Wording w, const std::string& key);
enum class HeadsAdvice : uint8_t { KptOrAngle, Mask, Angle, Anchor, Yolox };
// How to name heads of that form: heads=[Head(box=..., ...), ...] / "heads": [{"box": ..., ...}].
std::string heads_text(Wording w, HeadsAdvice form);
// "pass heads=[...] or use DecoderConfig.from_nms_json" / "name the heads in the config's ...".
std::string name_heads_advice(Wording w);
// The Model Zoo JSON (and, for Python, a HEF with its NMS op) that configures anchor heads.
std::string family_advice(Wording w);
// The remedy for outputs no head uses.
std::string unused_outputs_advice(Wording w);

// --- pairing by shape (pairing_by_shape.cpp) -------------------------------------------------
// (box, cls) heads, or (box, cls, kpt) / (box, cls, angle) when each grid holds three outputs;
// refuses to guess when more than one reading fits. bins 0, task "", keypoint_dims 0: not given.
std::vector<NamedHead> pair_by_shape(const Outputs& outputs, int bins, const std::string& task, int keypoint_dims,
                                     Wording wording);
// The box of a (box, cls) pair by channels (4 x bins; without bins, 64 channels, else the only
// multiple of 4); nullptr when both or neither could be.
const OutputShape* pick_box(const OutputShape& a, const OutputShape& b, int bins);
// The prototype output of a -seg model by shape, "" when the outputs do not look like one.
std::string find_proto(const Outputs& outputs);
// (box, cls, mask) heads of a -seg model: per grid the output with the prototype's channels holds
// the mask coefficients.
std::vector<NamedHead> pair_seg_by_shape(const Outputs& outputs, const OutputShape& proto, int bins, Wording wording);

// --- hints (pairing_hints.cpp) ------------------------------------------------------------------
// What outputs that are not DFL heads look like (YOLOv5/YOLOv7, YOLOX, YOLO26's OBB head) and
// what configures them; "" when neither fits.
std::string family_hint(const std::vector<GridGroup>& groups, const std::string& task, Wording wording);

// --- checks (pairing_checks.cpp) ----------------------------------------------------------------
// Each name in `used` names an output, once; every output is named.
void check_used_once(const std::vector<std::string>& used, const std::vector<OutputShape>& outputs, Wording wording);
struct TaskShape {
    std::string task;
    int num_keypoints = 0, keypoint_dims = 3;
};
// The task the DFL heads describe (pose: kpt outputs, obb: angle outputs, segment: mask outputs),
// checked against `task` ("" not given), with the keypoint count.
TaskShape check_task_outputs(const std::vector<NamedHead>& heads, const ByName& by_name, const std::string& task,
                             int keypoint_dims, Wording wording);
// Mask coefficient outputs against the prototype; its grid is the input size / proto_stride
// (0: not checked).
void check_seg(const OutputShape& proto, const std::vector<NamedHead>& heads, const ByName& by_name, int image_height,
               int image_width, int proto_stride, Wording wording);

// --- YOLOv5 / YOLOX heads (pairing_families.cpp) ----------------------------------------------
// The family of the heads given (all of one kind).
HeadKind head_family(const std::vector<NamedHead>& heads, Wording wording);
// The layout of YOLOv5 or YOLOX heads: every output in one head, the channels fitting, one class
// count, strides resolved.
Layout anchor_family_layout(HeadKind kind, std::vector<NamedHead> heads, const std::vector<OutputShape>& outputs,
                            const ByName& by_name, const Options& options);

// --- strides and the input size (pairing_strides.cpp) ------------------------------------------
// Both sides in [1, 2^20]; 64-bit, as a size derived from a stride x grid may lie beyond int.
void check_image_size(int64_t height, int64_t width);
// A given stride in [1, 2^20].
void check_stride(const NamedHead& head, int64_t stride);
// Every head's stride and the input size: a stride given must satisfy stride x grid = input size,
// a missing one is input size / grid. The input size, when options do not give it, is the first
// given stride x its grid, else the finest grid x 8. Heads are read by their box output's grid.
void resolve_strides(std::vector<NamedHead>& heads, const ByName& by_name, const Options& options, Layout& layout);

}  // namespace hailo_decode::setup::detail
