// The mask table follows the main one: the same instruction set as kernels::active().
#include <cstring>

#include "kernels.hpp"
#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {

const MaskTable& mask_active() {
    const char* name = active().name;
    const MaskTable* candidates[] = {mask_avx2_table(), mask_sse2_table(), mask_neon_table()};
    for (const MaskTable* t : candidates)
        if (t && std::strcmp(t->name, name) == 0) return *t;
    return mask_scalar_table();
}

}  // namespace kernels
}  // namespace hailo_decode
