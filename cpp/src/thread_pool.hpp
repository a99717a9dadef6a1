// A small persistent pool: run(n, job) calls job(0) on the calling thread and job(i), 0 < i < n,
// on the workers that join the run in time. No allocation per run.
//
// Decodes are short (tens of microseconds a frame) and often come back to back, so waking a
// sleeping thread (a futex round trip, tens of microseconds on a virtual machine, more where the
// kernel packs threads onto one CPU) would cost as much as the work. So:
// - after a run a worker spins for a while (kSpin) on the run counter before it sleeps, and
//   back-to-back runs never touch the kernel; a pool idle for longer than kSpin costs no CPU;
// - a worker joins a run only while it is open, and the caller closes it when its own job(0)
//   returns: the caller waits for the workers that joined, never for one still waking up. Jobs
//   must therefore share their work dynamically (job(0) must be able to do all of it).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hailo_decode {
namespace detail {

class ThreadPool {
public:
    static constexpr std::chrono::microseconds kSpin{200};

    explicit ThreadPool(size_t workers);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    size_t size() const { return workers_.size() + 1; }
    // Runs job(0) here and job(i), 0 < i < n <= size(), on the workers that join in time (see
    // above); returns when all that started are done. The first exception a job throws is
    // rethrown here.
    void run(size_t n, const std::function<void(size_t)>& job);

private:
    void work(size_t index);
    bool join(uint64_t run_number);  // true if the run is still open; counts the worker in
    void leave();

    static constexpr uint64_t kClosed = uint64_t(1) << 31, kCount = kClosed - 1;

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    // (run number << 16 | n of that run): a worker reads both at once.
    std::atomic<uint64_t> ticket_{0};
    // (run number << 32 | kClosed if closed | workers inside the job).
    std::atomic<uint64_t> state_{0};
    std::atomic<bool> stop_{false};
    const std::function<void(size_t)>* job_ = nullptr;  // read only by workers that joined
    std::exception_ptr error_;  // guarded by mutex_
};

}  // namespace detail
}  // namespace hailo_decode
