// Throughput of the exact integer mask kernels on a 160 x 160 x 32 uint8 tensor (in cache):
// window_u8i (a whole window a call; it replaced per-row dot_u8i calls plus a float conversion,
// 0.68 -> 0.57 ns a cell on AVX2, before dot_u8i left the table) against a plain read pass, on
// every instruction set built (AVX-VNNI and AVX-512 VNNI where the CPU has them); best of 200
// calls, three times; argument "narrow" for coefficients that fit one signed byte (one vpdpbusd
// a cell on the VNNI paths), else two parts. Build against the
// C++ core (BENCHMARKS.md, "Instance masks"):
//   cmake -S . -B build/dev -DHAILO_DECODE_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=Release && cmake --build build/dev -j2
//   g++ -O2 -std=c++17 -Icpp/src -Icpp/include benchmarks/mask_kernels.cpp build/dev/libhailo_decode_core.a \
//       -o /tmp/mask_kernels -lpthread && /tmp/mask_kernels
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#include "kernels/mask_kernels.hpp"
#include "kernels/kernels.hpp"
using namespace hailo_decode::kernels;
int main(int argc, char** argv) {
    // Coefficients (argument): "wide" k * 15 - 240, in [-240, 225] (two signed-byte parts on
    // AVX-VNNI), or "narrow" k * 8 - 128, in [-128, 120] (one part; a zero point near 128).
    const bool narrow = argc > 1 && argv[1][0] == 'n';
    std::vector<uint8_t> p(160 * 160 * 32);
    uint32_t s = 1;
    for (auto& v : p) { s = s * 1664525u + 1013904223u; v = uint8_t(s >> 24); }
    int16_t c[32];
    for (int k = 0; k < 32; ++k) c[k] = int16_t(narrow ? k * 8 - 128 : k * 15 - 240);
    std::vector<float> out(160 * 160);
    const MaskTable* tabs[] = {&mask_scalar_table(), mask_sse2_table(), mask_avx2_table(), mask_avxvnni_table(), mask_avx512vnni_table()};
    for (const MaskTable* t : tabs) {
        if (!t || !std::strstr(available(), t->name)) continue;  // not built, or not this CPU's
        for (int rep = 0; rep < 3; ++rep) {
            double best_w = 1e9, best_pass = 1e9;
            for (int it = 0; it < 200; ++it) {
                auto t0 = std::chrono::steady_clock::now();
                t->window_u8i(p.data(), 160, 160, 160 * 32, 32, 117, c, 0.01f, out.data());
                auto t2 = std::chrono::steady_clock::now();
                volatile uint64_t sink = 0; uint64_t acc = 0;
                const uint64_t* q = reinterpret_cast<const uint64_t*>(p.data());
                for (size_t i = 0; i < p.size() / 8; i += 4) acc += q[i] ^ q[i + 1] ^ q[i + 2] ^ q[i + 3];
                sink = acc;
                auto t3 = std::chrono::steady_clock::now();
                best_w = std::min(best_w, std::chrono::duration<double>(t2 - t0).count());
                best_pass = std::min(best_pass, std::chrono::duration<double>(t3 - t2).count());
                (void)sink;
            }
            std::printf("%-6s window_u8i %.3f ns/cell  (scalar xor pass %.3f ns/cell)\n", t->name,
                        best_w * 1e9 / 25600, best_pass * 1e9 / 25600);
        }
    }
}
