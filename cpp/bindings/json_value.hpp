// Python objects <-> json::Value, so that DecoderConfig's settings and a dict NMS JSON reach the
// same C++ checks as the TAPPAS plugin's JSON text. Python's kinds map to JSON's: None, bool
// (tested before int: True is an int too), int and numpy integers (integer literals), float and
// numpy floats (numbers, NaN and inf kept for the checks to refuse), str, list / tuple / numpy
// arrays (lists), dicts with str keys (objects). Anything else is a TypeError naming where it sits.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "hailo_decode/json.hpp"

namespace hailo_decode_bindings {

namespace json_value_detail {

// As deep as json::parse allows: a list that holds itself ends here, not in a stack overflow.
constexpr int kMaxDepth = 64;

inline std::string at(const std::string& path) { return path.empty() ? "the value" : path; }

inline hailo_decode::json::Value from_int(const pybind11::handle& obj) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (!overflow) return hailo_decode::json::Value::integer(int64_t(v));
    // Beyond int64: the nearest double (+-inf past 1e308) and the exact digits.
    double d = PyLong_AsDouble(obj.ptr());
    if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        d = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
    }
    return hailo_decode::json::Value::integer_beyond_int64(d, pybind11::str(obj).cast<std::string>());
}

inline hailo_decode::json::Value to_json(const pybind11::handle& obj, const std::string& path, int depth) {
    namespace py = pybind11;
    using hailo_decode::json::Value;
    if (depth > kMaxDepth) throw py::value_error(at(path) + " nests lists and dicts deeper than 64 levels");
    if (obj.is_none()) return Value();
    if (PyBool_Check(obj.ptr())) return Value::boolean(obj.ptr() == Py_True);
    if (PyLong_Check(obj.ptr())) return from_int(obj);
    if (PyFloat_Check(obj.ptr())) return Value::number(PyFloat_AsDouble(obj.ptr()));
    if (PyUnicode_Check(obj.ptr())) return Value::string(obj.cast<std::string>());
    if (py::isinstance<py::array>(obj)) return to_json(obj.attr("tolist")(), path, depth);
    static const py::object numpy_scalar = py::module_::import("numpy").attr("generic");
    if (py::isinstance(obj, numpy_scalar)) {
        const py::object item = obj.attr("item")();  // np.bool_ -> bool, np.int32 -> int, np.float32 -> float
        if (PyBool_Check(item.ptr()) || PyLong_Check(item.ptr()) || PyFloat_Check(item.ptr()))
            return to_json(item, path, depth);
    } else if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
        std::vector<Value> items;
        size_t i = 0;
        for (const py::handle item : obj) {
            items.push_back(to_json(item, path + "[" + std::to_string(i) + "]", depth + 1));
            ++i;
        }
        return Value::array(std::move(items));
    } else if (PyDict_Check(obj.ptr())) {
        std::vector<std::pair<std::string, Value>> members;
        for (const auto& [key, value] : obj.cast<py::dict>()) {
            if (!PyUnicode_Check(key.ptr()))
                throw py::type_error(at(path) + ": keys must be strings, got " + std::string(py::repr(key)) + " (" +
                                     Py_TYPE(key.ptr())->tp_name + ")");
            const std::string k = key.cast<std::string>();
            members.emplace_back(k, to_json(value, path.empty() ? k : path + "." + k, depth + 1));
        }
        return Value::object(std::move(members));
    }
    throw py::type_error(at(path) + ": a " + std::string(Py_TYPE(obj.ptr())->tp_name) +
                         " is not a JSON value (None, bool, number, str, list or dict), got " +
                         std::string(py::repr(obj)).substr(0, 80));
}

}  // namespace json_value_detail

// The JSON value of a Python object; TypeError for what JSON cannot hold.
inline hailo_decode::json::Value to_json(const pybind11::handle& obj) { return json_value_detail::to_json(obj, "", 0); }

// The Python object of a JSON value: integer literals become int, other numbers float.
inline pybind11::object from_json(const hailo_decode::json::Value& v) {
    namespace py = pybind11;
    using Kind = hailo_decode::json::Value::Kind;
    switch (v.kind()) {
        case Kind::Null: return py::none();
        case Kind::Bool: return py::bool_(v.as_bool());
        case Kind::Number:
            if (!v.is_integer_literal()) return py::float_(v.as_number());
            if (v.is_int64()) return py::int_(v.as_int());
            if (!v.big_integer_digits().empty())
                return py::reinterpret_steal<py::object>(PyLong_FromString(v.big_integer_digits().c_str(), nullptr, 10));
            return py::reinterpret_steal<py::object>(PyLong_FromDouble(v.as_number()));  // (finite: from parse)
        case Kind::String: return py::str(v.as_string());
        case Kind::Array: {
            py::list out;
            for (const auto& item : v.items()) out.append(from_json(item));
            return std::move(out);
        }
        case Kind::Object: {
            py::dict out;
            for (const auto& [key, item] : v.members()) out[py::str(key)] = from_json(item);
            return std::move(out);
        }
    }
    return py::none();
}

}  // namespace hailo_decode_bindings
