// The mask table follows the main one: the same instruction set as kernels::active().
#include <cstring>

#include "kernels.hpp"
#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {

namespace {

// `base` with `own`'s kernels where it has them (no name: not built).
MaskTable over(const MaskTable* base, const MaskTable* own) {
    if (!base || !own) return MaskTable{};
    auto pick = [](auto mine, auto theirs) { return mine ? mine : theirs; };
    return MaskTable{own->name, pick(own->dot_f32, base->dot_f32), pick(own->dot_u8f, base->dot_u8f),
                     pick(own->window_u8i, base->window_u8i), pick(own->blend_row, base->blend_row),
                     pick(own->sign_row, base->sign_row)};
}

}  // namespace

const MaskTable* mask_avxvnni_table() {
    static const MaskTable table = over(mask_avx2_table(), mask_avxvnni_kernels());
    return table.name ? &table : nullptr;
}

const MaskTable* mask_avx512vnni_table() {
    static const MaskTable table = over(mask_avx2_table(), mask_avx512vnni_kernels());
    return table.name ? &table : nullptr;
}

const MaskTable* mask_neondot_table() {
    static const MaskTable table = over(mask_neon_table(), mask_neondot_kernels());
    return table.name ? &table : nullptr;
}

const MaskTable& mask_active() {
    // Looked up by name when the main table changes (kernels::select), else the last answer:
    // the decoder and the renderer ask once per detection.
    thread_local const Table* seen = nullptr;
    thread_local const MaskTable* found = nullptr;
    const Table* main = &active();
    if (main != seen) {
        found = &mask_scalar_table();
        const MaskTable* candidates[] = {mask_avx512vnni_table(), mask_avxvnni_table(), mask_avx2_table(),
                                         mask_sse2_table(), mask_neondot_table(), mask_neon_table()};
        for (const MaskTable* t : candidates)
            if (t && std::strcmp(t->name, main->name) == 0) found = t;
        seen = main;
    }
    return *found;
}

}  // namespace kernels
}  // namespace hailo_decode
