// Chooses the kernel table once, from the CPU's features (or HAILO_DECODE_SIMD).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

bool cpu_has_avx2() {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

// Usable tables, worst to best.
int usable(const Table** out) {
    int n = 0;
    out[n++] = &scalar_table();
    if (const Table* t = sse2_table()) out[n++] = t;
    if (const Table* t = neon_table()) out[n++] = t;
    if (const Table* t = avx2_table(); t && cpu_has_avx2()) out[n++] = t;
    return n;
}

const Table* find(const char* name) {
    const Table* all[4];
    const int n = usable(all);
    for (int i = 0; i < n; ++i)
        if (std::strcmp(all[i]->name, name) == 0) return all[i];
    return nullptr;
}

const Table* initial() {
    const char* forced = std::getenv("HAILO_DECODE_SIMD");
    if (forced && *forced) {
        if (const Table* t = find(forced)) return t;
    }
    const Table* all[4];
    return all[usable(all) - 1];
}

std::atomic<const Table*>& current() {
    static std::atomic<const Table*> table{initial()};
    return table;
}

}  // namespace

const Table& active() { return *current().load(std::memory_order_acquire); }

bool select(const char* name) {
    const Table* t = find(name);
    if (!t) return false;
    current().store(t, std::memory_order_release);
    return true;
}

const char* available() {
    static const std::string names = [] {
        const Table* all[4];
        const int n = usable(all);
        std::string s;
        for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::string(all[i]->name);
        return s;
    }();
    return names.c_str();
}

}  // namespace kernels
}  // namespace hailo_decode
