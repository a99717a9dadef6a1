// Names, grids and lists in pairing's messages, written as the Python package prints them
// ('name', (80, 80), ['a', 'b']), so that a message reads the same from Python and from C++.
#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

std::string quoted(const std::string& s) {
    // Python's repr of a str: single quotes, unless the text holds one and no double quote.
    const char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
    std::string out(1, q);
    for (char c : s) {
        // Control characters as Python's repr writes them, so that a message stays one line.
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if ((unsigned char)c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[(unsigned char)c >> 4];
            out += hex[(unsigned char)c & 15];
        } else {
            if (c == '\\' || c == q) out += '\\';
            out += c;
        }
    }
    return out + q;
}

std::string task_text(const std::string& task) { return task.empty() ? "None" : quoted(task); }

std::string grid_text(int height, int width) {
    return "(" + std::to_string(height) + ", " + std::to_string(width) + ")";
}

namespace {
template <typename T, typename F>
std::string list_text(const std::vector<T>& items, F&& one) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + one(items[i]);
    return out + "]";
}
}  // namespace

std::string names_text(const std::vector<std::string>& names) { return list_text(names, quoted); }

std::string ints_text(const std::vector<int>& values) {
    return list_text(values, [](int v) { return std::to_string(v); });
}

std::string outputs_text(const Outputs& outputs, bool with_channels) {
    return list_text(outputs, [&](const OutputShape* o) {
        return quoted(with_channels ? o->name + " (" + std::to_string(o->channels) + " ch)" : o->name);
    });
}

std::string groups_text(const std::vector<GridGroup>& groups, bool with_channels) {
    std::string out = "{";
    for (size_t i = 0; i < groups.size(); ++i)
        out += (i ? ", " : "") + grid_text(groups[i].height, groups[i].width) + ": " +
               outputs_text(groups[i].outputs, with_channels);
    return out + "}";
}

std::string head_text(const NamedHead& head) {
    if (head.kind == HeadKind::YOLOV5) return "anchor head " + quoted(head.box);
    if (head.kind == HeadKind::YOLOX)
        return "YOLOX head (" + quoted(head.box) + ", " + quoted(head.obj) + ", " + quoted(head.cls) + ")";
    return "head (" + quoted(head.box) + ", " + quoted(head.cls) + ")";
}

std::string plural(int n, const std::string& one, const std::string& many) { return n == 1 ? one : many; }

}  // namespace hailo_decode::setup::detail
