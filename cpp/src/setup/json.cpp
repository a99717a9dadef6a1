// json::Value and a strict RFC 8259 parser: no comments, no trailing commas, no NaN or Infinity,
// UTF-8 only, duplicate keys refused; depth and size limited so hostile text cannot exhaust the
// stack or the memory. Numbers are read locale-independently (std::from_chars): a GStreamer
// process may have set a locale whose decimal point is a comma.
#include "hailo_decode/json.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

namespace hailo_decode::json {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxBytes = size_t(16) << 20;

[[noreturn]] void wrong_kind(Value::Kind want, Value::Kind got) {
    throw std::invalid_argument(std::string("JSON value is ") + Value::kind_name(got) + ", not " +
                                Value::kind_name(want));
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

void dump_string(const std::string& s, std::string& out) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += hex[c >> 4];
                    out += hex[c & 15];
                } else {
                    out += char(c);
                }
        }
    }
    out += '"';
}

void dump_number(double v, bool integer_literal, std::string& out) {
    if (std::isnan(v)) { out += "NaN"; return; }
    if (std::isinf(v)) { out += v > 0 ? "Infinity" : "-Infinity"; return; }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back as v
    std::string text(buf, r.ptr);
    // Written as 2.0 (a Python float), it must not read back as the integer 2 in a message.
    if (!integer_literal && text.find_first_of(".e") == std::string::npos) text += ".0";
    out += text;
}

void dump_value(const Value& v, std::string& out);

void dump_value(const Value& v, std::string& out) {
    switch (v.kind()) {
        case Value::Kind::Null: out += "null"; break;
        case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; break;
        case Value::Kind::Number:
            if (v.is_int64())
                out += std::to_string(v.as_int());
            else if (!v.big_integer_digits().empty())
                out += v.big_integer_digits();
            else
                dump_number(v.as_number(), v.is_integer_literal(), out);
            break;
        case Value::Kind::String: dump_string(v.as_string(), out); break;
        case Value::Kind::Array: {
            out += '[';
            const char* sep = "";
            for (const Value& item : v.items()) {
                out += sep;
                dump_value(item, out);
                sep = ", ";
            }
            out += ']';
            break;
        }
        case Value::Kind::Object: {
            out += '{';
            const char* sep = "";
            for (const auto& [key, item] : v.members()) {
                out += sep;
                dump_string(key, out);
                out += ": ";
                dump_value(item, out);
                sep = ", ";
            }
            out += '}';
            break;
        }
    }
}

// The parser: one pass over the text, recursive descent bounded by kMaxDepth.
class Parser {
public:
    explicit Parser(const std::string& text) : s_(text) {}

    Value document() {
        if (s_.size() > kMaxBytes)
            fail("the text is " + std::to_string(s_.size()) + " bytes, more than the 16 MiB a JSON document may have");
        if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) fail("a byte order mark (BOM) is not allowed before JSON text");
        skip_space();
        if (at_end()) fail("the text is empty, expected a JSON value");
        Value v = value(0);
        skip_space();
        if (!at_end()) fail("unexpected " + here() + " after the JSON value");
        return v;
    }

private:
    const std::string& s_;
    size_t pos_ = 0;

    bool at_end() const { return pos_ >= s_.size(); }
    char peek() const { return s_[pos_]; }

    // "line L, column C" of pos_ (columns count characters, not UTF-8 continuation bytes).
    [[noreturn]] void fail_at(size_t at, const std::string& what) const {
        size_t line = 1, column = 1;
        for (size_t i = 0; i < at && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                column = 1;
            } else if ((static_cast<unsigned char>(s_[i]) & 0xC0) != 0x80) {
                ++column;
            }
        }
        throw std::invalid_argument("line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
    }
    [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

    // What stands at pos_, for messages: 'x', end of text, or a byte in hex.
    std::string here() const {
        if (at_end()) return "end of text";
        const unsigned char c = static_cast<unsigned char>(peek());
        if (c >= 0x20 && c < 0x7F) return std::string("'") + char(c) + "'";
        static const char hex[] = "0123456789ABCDEF";
        return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
    }

    void skip_space() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
    }

    void expect(char c, const char* context) {
        if (at_end() || peek() != c) fail(std::string("expected '") + c + "' " + context + ", got " + here());
        ++pos_;
    }

    Value value(int depth) {
        if (at_end()) fail("expected a JSON value, got end of text");
        switch (peek()) {
            case '{': return object(depth + 1);
            case '[': return array(depth + 1);
            case '"': return Value::string(string());
            case 't': literal("true"); return Value::boolean(true);
            case 'f': literal("false"); return Value::boolean(false);
            case 'n': literal("null"); return Value();
            default:
                if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return number();
                if (s_.compare(pos_, 3, "NaN") == 0 || s_.compare(pos_, 8, "Infinity") == 0)
                    fail("NaN and Infinity are not JSON numbers");
                fail("expected a JSON value, got " + here());
        }
    }

    void literal(const char* word) {
        const std::string w(word);
        if (s_.compare(pos_, w.size(), w) != 0) fail("expected a JSON value, got " + here());
        pos_ += w.size();
    }

    void enter(int depth) const {
        if (depth > kMaxDepth) fail("lists and objects nest deeper than " + std::to_string(kMaxDepth) + " levels");
    }

    Value object(int depth) {
        enter(depth);
        ++pos_;  // '{'
        std::vector<std::pair<std::string, Value>> members;
        std::unordered_set<std::string> keys;
        skip_space();
        if (!at_end() && peek() == '}') {
            ++pos_;
            return Value::object(std::move(members));
        }
        for (;;) {
            skip_space();
            if (at_end() || peek() != '"') fail("expected a key (a string in double quotes), got " + here());
            const size_t key_at = pos_;
            std::string key = string();
            if (!keys.insert(key).second) {
                std::string quoted;
                dump_string(key, quoted);
                fail_at(key_at, "duplicate key " + quoted);
            }
            skip_space();
            expect(':', "after a key");
            skip_space();
            Value v = value(depth);
            members.emplace_back(std::move(key), std::move(v));
            skip_space();
            if (!at_end() && peek() == ',') {
                ++pos_;
                continue;
            }
            if (!at_end() && peek() == '}') {
                ++pos_;
                return Value::object(std::move(members));
            }
            fail("expected ',' or '}' after an object member, got " + here());
        }
    }

    Value array(int depth) {
        enter(depth);
        ++pos_;  // '['
        std::vector<Value> items;
        skip_space();
        if (!at_end() && peek() == ']') {
            ++pos_;
            return Value::array(std::move(items));
        }
        for (;;) {
            skip_space();
            items.push_back(value(depth));
            skip_space();
            if (!at_end() && peek() == ',') {
                ++pos_;
                continue;
            }
            if (!at_end() && peek() == ']') {
                ++pos_;
                return Value::array(std::move(items));
            }
            fail("expected ',' or ']' after a list item, got " + here());
        }
    }

    Value number() {
        const size_t start = pos_;
        if (peek() == '-') ++pos_;
        if (at_end() || !(peek() >= '0' && peek() <= '9')) fail("expected a digit after '-', got " + here());
        if (peek() == '0') {
            ++pos_;
            if (!at_end() && peek() >= '0' && peek() <= '9') fail("a number may not start with 0 (no leading zeros)");
        } else {
            digits();
        }
        bool integer = true;
        if (!at_end() && peek() == '.') {
            integer = false;
            ++pos_;
            if (at_end() || !(peek() >= '0' && peek() <= '9')) fail("expected a digit after '.', got " + here());
            digits();
        }
        if (!at_end() && (peek() == 'e' || peek() == 'E')) {
            integer = false;
            ++pos_;
            if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
            if (at_end() || !(peek() >= '0' && peek() <= '9')) fail("expected a digit in the exponent, got " + here());
            digits();
        }
        const char* first = s_.data() + start;
        const char* last = s_.data() + pos_;
        if (integer) {
            int64_t i = 0;
            const auto r = std::from_chars(first, last, i);
            if (r.ec == std::errc() && r.ptr == last) return Value::integer(i);
        }
        double d = 0.0;
        const auto r = std::from_chars(first, last, d);
        if (r.ec == std::errc::result_out_of_range) {
            // Too small reads as 0, as every JSON reader does; too large is refused (not infinity).
            const std::string text(first, last);
            const size_t e = text.find_first_of("eE");
            const bool tiny = e != std::string::npos ? text[e + 1] == '-'
                                                     : text.compare(text[0] == '-' ? 1 : 0, 2, "0.") == 0;
            if (!tiny) fail_at(start, "number " + text + " is out of range (beyond +-1.8e308)");
            d = text[0] == '-' ? -0.0 : 0.0;
        }
        return integer ? Value::integer_beyond_int64(d, std::string(first, last)) : Value::number(d);
    }

    void digits() {
        while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    }

    uint32_t hex4() {
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            if (at_end()) fail("expected 4 hex digits after \\u, got end of text");
            const char c = peek();
            uint32_t d;
            if (c >= '0' && c <= '9') d = uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f') d = uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') d = uint32_t(c - 'A' + 10);
            else fail("expected 4 hex digits after \\u, got " + here());
            v = v * 16 + d;
            ++pos_;
        }
        return v;
    }

    // A \uXXXX escape (pos_ after the 'u'), a surrogate pair joined into one code point.
    uint32_t escaped_code_point(size_t escape_at) {
        const uint32_t cp = hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) fail_at(escape_at, "a low surrogate (\\uDC00-\\uDFFF) without a high one before it");
        if (cp < 0xD800 || cp > 0xDBFF) return cp;
        if (s_.compare(pos_, 2, "\\u") != 0) fail_at(escape_at, "a high surrogate (\\uD800-\\uDBFF) without a low one after it");
        pos_ += 2;
        const uint32_t low = hex4();
        if (low < 0xDC00 || low > 0xDFFF) fail_at(escape_at, "a high surrogate (\\uD800-\\uDBFF) without a low one after it");
        return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }

    // One UTF-8 sequence copied as is, after checking it is well formed (no overlong forms, no
    // surrogates, nothing beyond U+10FFFF).
    void utf8(std::string& out) {
        const size_t at = pos_;
        const unsigned char c = static_cast<unsigned char>(peek());
        int extra;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { extra = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { extra = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { extra = 3; cp = c & 0x07; }
        else fail("invalid UTF-8 (" + here() + ")");
        for (int k = 1; k <= extra; ++k) {
            if (at + size_t(k) >= s_.size() || (static_cast<unsigned char>(s_[at + size_t(k)]) & 0xC0) != 0x80)
                fail_at(at, "invalid UTF-8 (a sequence cut short)");
            cp = (cp << 6) | (static_cast<unsigned char>(s_[at + size_t(k)]) & 0x3F);
        }
        if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
            fail_at(at, "invalid UTF-8 (an overlong form, a surrogate or beyond U+10FFFF)");
        out.append(s_, at, size_t(extra) + 1);
        pos_ = at + size_t(extra) + 1;
    }

    std::string string() {
        const size_t start = pos_;
        ++pos_;  // '"'
        std::string out;
        for (;;) {
            if (at_end()) fail_at(start, "a string that never ends (no closing '\"')");
            const unsigned char c = static_cast<unsigned char>(peek());
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (c < 0x20) fail("a control character (" + here() + ") inside a string; write it as an escape such as \\n");
            if (c >= 0x80) {
                utf8(out);
                continue;
            }
            if (c != '\\') {
                out += char(c);
                ++pos_;
                continue;
            }
            const size_t escape_at = pos_;
            ++pos_;
            if (at_end()) fail("a string that never ends (no closing '\"')");
            const char e = peek();
            ++pos_;
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': append_utf8(out, escaped_code_point(escape_at)); break;
                default:
                    --pos_;
                    fail_at(escape_at, "unknown escape \\ followed by " + here());
            }
        }
    }
};

}  // namespace

Value Value::boolean(bool b) {
    Value v;
    v.kind_ = Kind::Bool;
    v.b_ = b;
    return v;
}

Value Value::number(double d) {
    Value v;
    v.kind_ = Kind::Number;
    v.n_ = d;
    return v;
}

Value Value::integer(int64_t i) {
    Value v = number(double(i));
    v.whole_literal_ = v.exact_int_ = true;
    v.i_ = i;
    return v;
}

Value Value::integer_beyond_int64(double d, std::string digits) {
    Value v = number(d);
    v.whole_literal_ = true;
    v.s_ = std::move(digits);
    return v;
}

Value Value::string(std::string s) {
    Value v;
    v.kind_ = Kind::String;
    v.s_ = std::move(s);
    return v;
}

Value Value::array(std::vector<Value> items) {
    Value v;
    v.kind_ = Kind::Array;
    v.items_ = std::move(items);
    return v;
}

Value Value::object(std::vector<std::pair<std::string, Value>> members) {
    Value v;
    v.kind_ = Kind::Object;
    v.members_ = std::move(members);
    return v;
}

bool Value::is_whole() const {
    return kind_ == Kind::Number && (exact_int_ || (std::isfinite(n_) && n_ == std::floor(n_)));
}

bool Value::as_bool() const {
    if (kind_ != Kind::Bool) wrong_kind(Kind::Bool, kind_);
    return b_;
}

double Value::as_number() const {
    if (kind_ != Kind::Number) wrong_kind(Kind::Number, kind_);
    return n_;
}

int64_t Value::as_int() const {
    if (kind_ != Kind::Number) wrong_kind(Kind::Number, kind_);
    if (exact_int_) return i_;
    // 2^63 is exactly representable; every whole double below it in magnitude fits int64.
    if (!is_whole() || n_ < -9223372036854775808.0 || n_ >= 9223372036854775808.0)
        throw std::invalid_argument("JSON number " + dump() + " is not an integer within 64 bits");
    return int64_t(n_);
}

const std::string& Value::as_string() const {
    if (kind_ != Kind::String) wrong_kind(Kind::String, kind_);
    return s_;
}

const std::vector<Value>& Value::items() const {
    if (kind_ != Kind::Array) wrong_kind(Kind::Array, kind_);
    return items_;
}

const std::vector<std::pair<std::string, Value>>& Value::members() const {
    if (kind_ != Kind::Object) wrong_kind(Kind::Object, kind_);
    return members_;
}

const Value* Value::find(const std::string& key) const {
    if (kind_ != Kind::Object) return nullptr;
    for (const auto& m : members_)
        if (m.first == key) return &m.second;
    return nullptr;
}

std::string Value::dump() const {
    std::string out;
    dump_value(*this, out);
    return out;
}

const char* Value::kind_name(Kind k) {
    switch (k) {
        case Kind::Null: return "null";
        case Kind::Bool: return "a boolean";
        case Kind::Number: return "a number";
        case Kind::String: return "a string";
        case Kind::Array: return "a list";
        case Kind::Object: return "an object";
    }
    return "?";
}

Value parse(const std::string& text) { return Parser(text).document(); }

}  // namespace hailo_decode::json
