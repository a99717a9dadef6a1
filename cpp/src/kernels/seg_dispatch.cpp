// The seg table follows the main one: the same instruction set as kernels::active() (AVX-VNNI and
// AVX-512 levels use AVX2's seg kernels, the dot-product level plain NEON's).
#include <cstring>

#include "kernels.hpp"
#include "seg_kernels.hpp"

namespace hailo_decode {
namespace kernels {

const SegTable& seg_active() {
    thread_local const Table* seen = nullptr;
    thread_local const SegTable* found = nullptr;
    const Table* main = &active();
    if (main != seen) {
        const char* n = main->name;
        const SegTable* t = nullptr;
        if (!std::strcmp(n, "avx2") || !std::strcmp(n, "avxvnni") || !std::strcmp(n, "avx512vnni")) t = seg_avx2_table();
        else if (!std::strcmp(n, "sse2")) t = seg_sse2_table();
        else if (!std::strcmp(n, "neon") || !std::strcmp(n, "neondot")) t = seg_neon_table();
        found = t ? t : &seg_scalar_table();
        seen = main;
    }
    return *found;
}

}  // namespace kernels
}  // namespace hailo_decode
