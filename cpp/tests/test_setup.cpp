// Setup: the JSON parser (valid and invalid documents, positions, depth, escapes, duplicates).
#include <cmath>
#include <string>

#include "hailo_decode/json.hpp"
#include "check.hpp"

using namespace hailo_decode;

static bool parse_fails(const std::string& text, const char* needle) {
    return throws([&] { json::parse(text); }, needle);
}

static void test_json_values() {
    const json::Value v = json::parse(R"( {"a": [1, -2.5, 1e2, true, false, null], "b": {"c": "x"}, "d": 16.0} )");
    CHECK(v.is_object() && v.members().size() == 3 && v.members()[0].first == "a");
    const auto& a = v.find("a")->items();
    CHECK(a.size() == 6);
    CHECK(a[0].is_integer_literal() && a[0].as_int() == 1);
    CHECK(a[1].as_number() == -2.5 && !a[1].is_whole() && !a[1].is_integer_literal());
    CHECK(a[2].is_whole() && !a[2].is_integer_literal() && a[2].as_int() == 100);
    CHECK(a[3].as_bool() && !a[4].as_bool() && a[5].is_null());
    CHECK(v.find("b")->find("c")->as_string() == "x");
    CHECK(v.find("d")->is_whole() && !v.find("d")->is_integer_literal());
    CHECK(v.find("zz") == nullptr);
    CHECK(json::parse("-0").as_number() == 0.0 && json::parse("0").is_integer_literal());
    CHECK(json::parse("9223372036854775807").as_int() == INT64_MAX);
    const json::Value big = json::parse("100000000000000000000000000000");  // beyond int64
    CHECK(big.is_integer_literal() && big.as_number() == 1e29);
    CHECK(throws([&] { big.as_int(); }, "not an integer within 64 bits"));
    CHECK(json::parse("1e-400").as_number() == 0.0);  // underflow reads as 0
    CHECK(json::parse("[]").items().empty() && json::parse("{}").members().empty());
    CHECK(throws([] { json::parse("1").as_string(); }, "JSON value is a number, not a string"));
}

static void test_json_escapes() {
    CHECK(json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
    CHECK(json::parse(R"("\u00e9\u20AC")").as_string() == "\xC3\xA9\xE2\x82\xAC");      // é €
    CHECK(json::parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");          // a surrogate pair
    CHECK(json::parse("\"\xC3\xA9\"").as_string() == "\xC3\xA9");                        // raw UTF-8 kept
    CHECK(parse_fails(R"("\ud83d")", "column 2: a high surrogate"));
    CHECK(parse_fails(R"("\ud83dx")", "without a low one"));
    CHECK(parse_fails(R"("\ude00")", "a low surrogate"));
    CHECK(parse_fails(R"("\u12g4")", "expected 4 hex digits after \\u, got 'g'"));
    CHECK(parse_fails(R"("\x")", "unknown escape \\x"));
    CHECK(parse_fails("\"a\nb\"", "line 1, column 3: a control character"));
    CHECK(parse_fails("\"\xC0\xAF\"", "invalid UTF-8"));           // overlong '/'
    CHECK(parse_fails("\"\xED\xA0\x80\"", "invalid UTF-8"));       // an encoded surrogate
    CHECK(parse_fails("\"\xE2\x82\"", "cut short"));
    CHECK(parse_fails("\"abc", "line 1, column 1: a string that never ends"));
}

static void test_json_errors_and_positions() {
    CHECK(parse_fails("", "line 1, column 1: the text is empty"));
    CHECK(parse_fails("  \n ", "line 2, column 2: the text is empty"));
    CHECK(parse_fails("{\n  \"a\": 1,\n  \"b\": tru\n}", "line 3, column 8: expected a JSON value, got 't'"));
    CHECK(parse_fails("{\"a\": 1,}", "line 1, column 9: expected a key"));
    CHECK(parse_fails("[1, 2,]", "line 1, column 7: expected a JSON value, got ']'"));
    CHECK(parse_fails("[1 2]", "line 1, column 4: expected ',' or ']' after a list item, got '2'"));
    CHECK(parse_fails("{\"a\" 1}", "expected ':' after a key, got '1'"));
    CHECK(parse_fails("{\"a\": 1 \"b\": 2}", "expected ',' or '}' after an object member"));
    CHECK(parse_fails("{\"a\": 1, \"b\": 2, \"a\": 3}", "line 1, column 18: duplicate key \"a\""));
    CHECK(parse_fails("{} x", "line 1, column 4: unexpected 'x' after the JSON value"));
    CHECK(parse_fails("NaN", "NaN and Infinity are not JSON numbers"));
    CHECK(parse_fails("[Infinity]", "NaN and Infinity"));
    CHECK(parse_fails("-Infinity", "expected a digit after '-'"));
    CHECK(parse_fails("01", "leading zeros"));
    CHECK(parse_fails("1.", "expected a digit after '.'"));
    CHECK(parse_fails("1e", "expected a digit in the exponent"));
    CHECK(parse_fails("+1", "expected a JSON value, got '+'"));
    CHECK(parse_fails("1e400", "number 1e400 is out of range"));
    CHECK(parse_fails("{'a': 1}", "expected a key (a string in double quotes), got '''"));
    CHECK(parse_fails("// c\n{}", "expected a JSON value, got '/'"));
    CHECK(parse_fails("\xEF\xBB\xBF{}", "byte order mark"));
    CHECK(parse_fails(std::string("[\x01]"), "got byte 0x01"));
    // Columns count characters: "é" is one.
    CHECK(parse_fails("[\"\xC3\xA9\", x]", "line 1, column 7: expected a JSON value, got 'x'"));
}

static void test_json_limits() {
    std::string deep64(64, '['), deep65(65, '[');
    deep64 += std::string(64, ']');
    deep65 += std::string(65, ']');
    CHECK(json::parse(deep64).is_array());
    CHECK(parse_fails(deep65, "column 65: lists and objects nest deeper than 64 levels"));
    std::string hostile(100000, '[');  // no stack overflow
    CHECK(parse_fails(hostile, "nest deeper than 64"));
    std::string huge = "\"" + std::string((size_t(16) << 20), 'a') + "\"";
    CHECK(parse_fails(huge, "more than the 16 MiB"));
}

static void test_json_dump() {
    CHECK(json::parse(R"({"a": [1, 2.5, "x\"y", true, null], "b": {}})").dump() ==
          R"({"a": [1, 2.5, "x\"y", true, null], "b": {}})");
    CHECK(json::Value::number(2.0).dump() == "2.0");
    CHECK(json::Value::integer(2).dump() == "2");
    CHECK(json::Value::number(-0.5).dump() == "-0.5");
    CHECK(json::Value::number(1e30).dump() == "1e+30");
    CHECK(json::Value::number(0.1).dump() == "0.1");
    CHECK(json::Value::number(NAN).dump() == "NaN");
    CHECK(json::Value::number(-INFINITY).dump() == "-Infinity");
    CHECK(json::parse("100000000000000000000000000000").dump() == "1e+29");
    CHECK(json::Value::string("a\nb\x01").dump() == "\"a\\nb\\u0001\"");
    // What dump writes, parse reads back (finite values).
    const std::string text = R"([0.30000000000000004, -1e-300, 123456789012, "\u00e9"])";
    CHECK(json::parse(json::parse(text).dump()).dump() == json::parse(text).dump());
}

int main() {
    test_json_values();
    test_json_escapes();
    test_json_errors_and_positions();
    test_json_limits();
    test_json_dump();
    return report();
}
