// A small persistent pool: run(n, job) calls job(0..n-1), job 0 on the calling thread, the rest on
// workers that live as long as the pool. No allocation per run.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hailo_decode {
namespace detail {

class ThreadPool {
public:
    explicit ThreadPool(size_t workers);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    size_t size() const { return workers_.size() + 1; }
    // Runs job(i) for i in [0, n), n <= size(); returns when all are done. The first exception a
    // job throws is rethrown here.
    void run(size_t n, const std::function<void(size_t)>& job);

private:
    void work(size_t index);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    const std::function<void(size_t)>* job_ = nullptr;
    size_t jobs_ = 0, pending_ = 0;
    unsigned long generation_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

}  // namespace detail
}  // namespace hailo_decode
