// Chooses the kernel table once, from the CPU's features (or HAILO_DECODE_SIMD).
#include <atomic>
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels.hpp"
#include "mask_kernels.hpp"

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

// AVX-VNNI (the VEX-encoded vpdpbusd): CPUID leaf 7 sub-leaf 1, EAX bit 4. Its registers are
// AVX2's, whose OS support cpu_has_avx2 checks.
bool cpu_has_avxvnni() {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
    unsigned a = 0, b = 0, c = 0, d = 0;
    return cpu_has_avx2() && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
#else
    return false;
#endif
}

// A level that differs from `base` only in the mask table's integer window kernel (`mask`,
// mask_kernels.hpp): base's kernels here under the level's name, a level of its own so that
// HAILO_DECODE_SIMD and select() choose it. `slot` holds the copy; nullptr where either table is
// not built.
const Table* mask_only_level(const Table* base, const MaskTable* mask, const char* name, Table& slot) {
    if (!base || !mask) return nullptr;
    slot = *base;
    slot.name = name;
    return &slot;
}

// The "avxvnni" level: AVX2's kernels, the window kernel with VNNI.
const Table* avxvnni_table() {
    static Table slot;
    static const Table* table = mask_only_level(avx2_table(), mask_avxvnni_table(), "avxvnni", slot);
    return table;
}

// AVX-512 F, VL and VNNI (with the OS's ZMM state: __builtin_cpu_supports checks XCR0).
bool cpu_has_avx512vnni() {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
}

// `base` with `own`'s kernels where it has them (own: a partial table, the rest null).
Table overlay(const Table& base, const Table& own) {
    auto pick = [](auto mine, auto theirs) { return mine ? mine : theirs; };
    Table t = base;
    t.scan_u8 = pick(own.scan_u8, base.scan_u8);
    t.scan_u16 = pick(own.scan_u16, base.scan_u16);
    t.scan_f32 = pick(own.scan_f32, base.scan_f32);
    t.scan_u8_uniform = pick(own.scan_u8_uniform, base.scan_u8_uniform);
    t.scan_u16_uniform = pick(own.scan_u16_uniform, base.scan_u16_uniform);
    t.dfl16 = pick(own.dfl16, base.dfl16);
    t.dfl16_u8 = pick(own.dfl16_u8, base.dfl16_u8);
    t.dfl16_u8_cells = pick(own.dfl16_u8_cells, base.dfl16_u8_cells);
    t.any_iou_over = pick(own.any_iou_over, base.any_iou_over);
    t.probiou_filter = pick(own.probiou_filter, base.probiou_filter);
    t.probiou_verdicts = pick(own.probiou_verdicts, base.probiou_verdicts);
    t.probiou_gaussians = pick(own.probiou_gaussians, base.probiou_gaussians);
    t.enclosing_boxes = pick(own.enclosing_boxes, base.enclosing_boxes);
    t.dequant_u8 = pick(own.dequant_u8, base.dequant_u8);
    t.byte_sum = pick(own.byte_sum, base.byte_sum);
    t.cell_max_u8 = pick(own.cell_max_u8, base.cell_max_u8);
    t.cell_max_gate_u8 = pick(own.cell_max_gate_u8, base.cell_max_gate_u8);
    t.cells_at_least_u8 = pick(own.cells_at_least_u8, base.cells_at_least_u8);
    t.count_above = pick(own.count_above, base.count_above);
    t.nms_list = pick(own.nms_list, base.nms_list);
    return t;
}
static_assert(sizeof(Table) == sizeof(void*) * 21, "overlay lists every kernel of the table");

// The "avx512vnni" level: AVX2's kernels with avx512.cpp's in their place (the short scans, the
// NMS test, the rank count), the window kernel with AVX-512 VNNI.
const Table* avx512vnni_table() {
    static Table slot;
    static const Table* table = [] {
        const Table* base = avx2_table();
        const Table* own = avx512_kernels();
        if (!base || !own) return static_cast<const Table*>(nullptr);
        const Table* t = mask_only_level(base, mask_avx512vnni_table(), "avx512vnni", slot);
        if (t) slot = overlay(slot, *own);
        return t;
    }();
    return table;
}

// The Armv8.2 dot product instructions (udot/sdot), as Linux reports them.
bool cpu_has_asimddp() {
#if defined(__aarch64__) && defined(__linux__)
    constexpr unsigned long kHwcapAsimddp = 1ul << 20;  // HWCAP_ASIMDDP (asm/hwcap.h)
    return (getauxval(AT_HWCAP) & kHwcapAsimddp) != 0;
#else
    return false;
#endif
}

// The "neondot" level: plain NEON's kernels, the window kernel with udot.
const Table* neondot_table() {
    static Table slot;
    static const Table* table = mask_only_level(neon_table(), mask_neondot_table(), "neondot", slot);
    return table;
}

constexpr int kMaxTables = 7;

// Usable tables, worst to best.
int usable(const Table** out) {
    int n = 0;
    out[n++] = &scalar_table();
    if (const Table* t = sse2_table()) out[n++] = t;
    if (const Table* t = neon_table()) out[n++] = t;
    if (const Table* t = neondot_table(); t && cpu_has_asimddp()) out[n++] = t;
    if (const Table* t = avx2_table(); t && cpu_has_avx2()) out[n++] = t;
    if (const Table* t = avxvnni_table(); t && cpu_has_avxvnni()) out[n++] = t;
    if (const Table* t = avx512vnni_table(); t && cpu_has_avx512vnni()) out[n++] = t;
    return n;
}

const Table* find(const char* name) {
    const Table* all[kMaxTables];
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
    const Table* all[kMaxTables];
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
        const Table* all[kMaxTables];
        const int n = usable(all);
        std::string s;
        for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::string(all[i]->name);
        return s;
    }();
    return names.c_str();
}

}  // namespace kernels
}  // namespace hailo_decode
