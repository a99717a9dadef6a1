// The mask table follows the main one: the same instruction set as kernels::active().
#include <cstring>

#include "kernels.hpp"
#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {

const MaskTable* mask_avxvnni_table() {
    static const MaskTable* table = []() -> const MaskTable* {
        const MaskTable* avx2 = mask_avx2_table();
        const WindowU8i vnni = avxvnni_window_u8i();
        if (!avx2 || !vnni) return nullptr;
        static const MaskTable t{"avxvnni", avx2->dot_f32, avx2->dot_u8f, vnni, avx2->blend_row, avx2->sign_row};
        return &t;
    }();
    return table;
}

const MaskTable* mask_avx512vnni_table() {
    static const MaskTable* table = []() -> const MaskTable* {
        const MaskTable* avx2 = mask_avx2_table();
        const WindowU8i vnni = avx512vnni_window_u8i();
        if (!avx2 || !vnni) return nullptr;
        static const MaskTable t{"avx512vnni", avx2->dot_f32, avx2->dot_u8f, vnni, avx2->blend_row, avx2->sign_row};
        return &t;
    }();
    return table;
}

const MaskTable& mask_active() {
    const char* name = active().name;
    const MaskTable* candidates[] = {mask_avx512vnni_table(), mask_avxvnni_table(), mask_avx2_table(), mask_sse2_table(), mask_neon_table()};
    for (const MaskTable* t : candidates)
        if (t && std::strcmp(t->name, name) == 0) return *t;
    return mask_scalar_table();
}

}  // namespace kernels
}  // namespace hailo_decode
