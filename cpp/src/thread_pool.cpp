#include "thread_pool.hpp"

namespace hailo_decode {
namespace detail {

ThreadPool::ThreadPool(size_t workers) {
    workers_.reserve(workers);
    for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this, i] { work(i + 1); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    start_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::work(size_t index) {
    unsigned long seen = 0;
    for (;;) {
        const std::function<void(size_t)>* job;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            start_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            if (index >= jobs_) continue;
            job = job_;
        }
        std::exception_ptr err;
        try { (*job)(index); } catch (...) { err = std::current_exception(); }
        std::lock_guard<std::mutex> lock(mutex_);
        if (err && !error_) error_ = err;
        if (--pending_ == 0) done_.notify_one();
    }
}

void ThreadPool::run(size_t n, const std::function<void(size_t)>& job) {
    if (n == 0) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = &job;
        jobs_ = n;
        pending_ = n - 1;
        error_ = nullptr;
        ++generation_;
    }
    if (n > 1) start_.notify_all();
    std::exception_ptr err;
    try { job(0); } catch (...) { err = std::current_exception(); }
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    if (!err) err = error_;
    job_ = nullptr;
    if (err) std::rethrow_exception(err);
}

}  // namespace detail
}  // namespace hailo_decode
