// Every allocation of the test program is counted (operator new replaced), so that a test can show
// a decoder allocates nothing once warm. Include it in one translation unit of a program only.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

static std::atomic<long> g_allocations{0};
void* operator new(std::size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's buffer comes from them): left to the runtime, their
// blocks would be freed by the replaced delete, which AddressSanitizer reports as a mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    ++g_allocations;
    return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
