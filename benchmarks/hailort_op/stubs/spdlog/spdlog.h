// Benchmark-only stand-in for spdlog (HailoRT's logger), so that HailoRT's post-process ops compile
// alone: every log call does nothing, fmt::format returns its format string. Never part of the package.
#pragma once
#include <ostream>
#include <string>
#include <utility>

namespace fmt {
template <typename T, typename Char = char, typename Enable = void>
struct formatter {};
struct ostream_formatter {};
template <typename... Args>
inline std::string format(const char* f, Args&&...) { return f; }
template <typename... Args>
inline std::string format(const std::string& f, Args&&...) { return f; }
}  // namespace fmt

#define SPDLOG_LEVEL_DEBUG 1
#define SPDLOG_LEVEL_INFO 2
#define SPDLOG_TRACE(...) ((void)0)
#define SPDLOG_DEBUG(...) ((void)0)
#define SPDLOG_INFO(...) ((void)0)
#define SPDLOG_WARN(...) ((void)0)
#define SPDLOG_ERROR(...) ((void)0)
#define SPDLOG_CRITICAL(...) ((void)0)
