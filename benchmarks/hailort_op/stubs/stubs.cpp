// Benchmark-only definitions of the few libhailort members HailoRT's post-process ops call
// (MemoryView's, as libhailort/src/utils/buffer.cpp defines them; the status message for the
// logger's operator<<), so that the ops build alone. Never part of the package.
#include "hailo/buffer.hpp"
#include "hailo/hailort.h"

namespace hailort {
MemoryView::MemoryView(void* data, size_t size) noexcept : m_data(data), m_size(size) {}
uint8_t* MemoryView::data() noexcept { return static_cast<uint8_t*>(m_data); }
const uint8_t* MemoryView::data() const noexcept { return static_cast<const uint8_t*>(m_data); }
size_t MemoryView::size() const noexcept { return m_size; }
}  // namespace hailort

extern "C" const char* hailo_get_status_message(hailo_status) { return "status"; }
