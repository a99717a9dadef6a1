#include "thread_pool.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace hailo_decode {
namespace detail {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(_M_X64)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Spins until done() or for about `limit`; returns done().
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (unsigned i = 1;; ++i) {
        if (done()) return true;
        cpu_relax();
        if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return done();
    }
}

}  // namespace

ThreadPool::ThreadPool(size_t workers) {
    workers_.reserve(workers);
    for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this, i] { work(i + 1); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_.store(true);
    }
    start_.notify_all();
    for (auto& t : workers_) t.join();
}

bool ThreadPool::join(uint64_t run_number) {
    uint64_t s = state_.load(std::memory_order_acquire);
    do {
        if ((s >> 32) != run_number || (s & kClosed)) return false;
    } while (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire));
    return true;
}

void ThreadPool::leave() {
    const uint64_t s = state_.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((s & kClosed) && (s & kCount) == 0) {
        std::lock_guard<std::mutex> lock(mutex_);  // the caller may be about to sleep on done_
        done_.notify_one();
    }
}

void ThreadPool::work(size_t index) {
    uint64_t seen = 0;
    for (;;) {
        auto ready = [&] { return stop_.load(std::memory_order_acquire) || ticket_.load(std::memory_order_acquire) != seen; };
        if (!spin_until(ready, kSpin)) {
            std::unique_lock<std::mutex> lock(mutex_);
            start_.wait(lock, ready);
        }
        if (stop_.load(std::memory_order_acquire)) return;
        seen = ticket_.load(std::memory_order_acquire);
        if (index >= (seen & 0xffff) || !join(seen >> 16)) continue;  // not needed, or too late
        std::exception_ptr err;
        try { (*job_)(index); } catch (...) { err = std::current_exception(); }
        if (err) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_) error_ = err;
        }
        leave();
    }
}

void ThreadPool::run(size_t n, const std::function<void(size_t)>& job) {
    if (n == 0) return;
    if (n > 1) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &job;
            error_ = nullptr;
            const uint64_t run_number = (ticket_.load(std::memory_order_relaxed) >> 16) + 1;
            state_.store(run_number << 32, std::memory_order_release);  // open, nobody inside
            ticket_.store(run_number << 16 | n, std::memory_order_release);
        }
        start_.notify_all();  // no system call when every worker is spinning
    }
    std::exception_ptr err;
    try { job(0); } catch (...) { err = std::current_exception(); }
    if (n == 1) {
        if (err) std::rethrow_exception(err);
        return;
    }
    // Close the run: from here no worker joins, and only those inside are waited for.
    auto finished = [&] { return (state_.load(std::memory_order_acquire) & kCount) == 0; };
    state_.fetch_or(kClosed, std::memory_order_acq_rel);
    if (!spin_until(finished, kSpin)) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, finished);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!err) err = error_;
    job_ = nullptr;
    if (err) std::rethrow_exception(err);
}

}  // namespace detail
}  // namespace hailo_decode
