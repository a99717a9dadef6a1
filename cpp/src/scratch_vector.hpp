// ScratchVector<T>: a std::vector whose resize leaves new elements uninitialized, for the
// per-frame lists a workspace keeps. Each is cleared and grown again every frame, then written
// in full; value-initializing the growth would zero every element first, for nothing.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace hailo_decode {
namespace detail {

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
    static_assert(std::is_trivially_default_constructible<T>::value, "only for plain data");
    template <typename U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    DefaultInitAllocator() = default;
    template <typename U>
    DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialization: no zeroing
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

template <typename T>
using ScratchVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace detail
}  // namespace hailo_decode
