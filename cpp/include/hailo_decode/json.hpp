// A JSON value and a strict parser (RFC 8259), for the settings a user writes: the TAPPAS plugin's
// config file, the DFC / Model Zoo NMS JSON, and the same settings handed over from Python (the
// binding converts a dict into a Value, so both read one checker: hailo_decode/setup.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hailo_decode::json {

class Value {
public:
    enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };

    Value() = default;  // null
    static Value boolean(bool b);
    static Value number(double v);         // any finite or non-finite double (Python may hand inf/nan)
    static Value integer(int64_t v);       // a number written without fraction or exponent
    // The same, too large for int64: held as a double, with its digits as written when known.
    static Value integer_beyond_int64(double v, std::string digits = "");
    static Value string(std::string s);
    static Value array(std::vector<Value> items);
    static Value object(std::vector<std::pair<std::string, Value>> members);  // keys in written order

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::Null; }
    bool is_bool() const { return kind_ == Kind::Bool; }
    bool is_number() const { return kind_ == Kind::Number; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_array() const { return kind_ == Kind::Array; }
    bool is_object() const { return kind_ == Kind::Object; }
    // A number that is a whole value (written 16, 16.0 or 1.6e1; finite).
    bool is_whole() const;
    // A number written as an integer literal (16, not 16.0): Python's int, the settings' "integer".
    bool is_integer_literal() const { return kind_ == Kind::Number && whole_literal_; }
    // An integer literal within int64: as_int() gives it exactly (a double may not hold it).
    bool is_int64() const { return kind_ == Kind::Number && exact_int_; }
    // The digits of an integer literal beyond int64 as written ("" when not known or not one).
    const std::string& big_integer_digits() const { return s_; }

    // Accessors throw std::invalid_argument when the kind differs.
    bool as_bool() const;
    double as_number() const;
    int64_t as_int() const;  // is_whole() and within int64
    const std::string& as_string() const;
    const std::vector<Value>& items() const;                                // array
    const std::vector<std::pair<std::string, Value>>& members() const;      // object
    // Object member by key, nullptr when absent (or when this is not an object).
    const Value* find(const std::string& key) const;

    // The value as written back in JSON (for error messages: "got [1, 2]", "got \"fast\""); a
    // number not written as an integer keeps a fraction (2.0), non-finite ones read NaN, Infinity.
    std::string dump() const;
    // "null", "a boolean", "a number", "a string", "a list", "an object".
    static const char* kind_name(Kind k);

private:
    Kind kind_ = Kind::Null;
    bool b_ = false;
    bool whole_literal_ = false;  // written as an integer literal
    bool exact_int_ = false;      // ... and i_ holds it (it fits int64)
    double n_ = 0.0;
    int64_t i_ = 0;
    std::string s_;
    std::vector<Value> items_;
    std::vector<std::pair<std::string, Value>> members_;
};

// Parses one JSON document (trailing white space only). Throws std::invalid_argument
// "line L, column C: <what is wrong>"; a duplicate key in one object is an error too. Depth is
// limited (no stack overflow on hostile input), and so is the text's size (16 MiB).
Value parse(const std::string& text);

}  // namespace hailo_decode::json
