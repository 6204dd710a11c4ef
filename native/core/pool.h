// A fixed set of worker threads that split one call's work with the calling thread: a scan
// pass or an index build uses every core, and a call from a libuv worker waits only for its
// own tasks. Several callers may run jobs at once; each job's tasks are taken in order.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nm {

class Pool {
 public:
  // `width` threads in all, the caller's included (so width - 1 workers); 0: one per core.
  explicit Pool(size_t width = 0);
  // `workers` threads at niceness `nice` that do all of a call's work while the caller waits
  // (background()'s shape); 0: one per core.
  Pool(size_t workers, int nice);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  size_t width() const { return workers_.size() + (caller_works_ ? 1 : 0); }
  // Calls of run() in progress now.
  size_t busy() const { return running_.load(std::memory_order_relaxed); }
  // Runs fn(i) for every i in [0, n), on the workers and the calling thread, and returns when
  // all have finished. The first exception a task throws is rethrown here.
  void run(size_t n, const std::function<void(size_t)>& fn);
  // The process-wide pool (one thread per core this process may run on).
  static Pool& shared();
  // Standing work behind ingest (monitors.h): one worker per core at nice 19, the caller
  // waiting. It takes the cores ingest and queries leave idle, and beside them only a small
  // share (the scheduler weighs nice 19 at 1.5% of the event loop's nice 0 and 4% of the
  // engine's nice-5 threads): a busy box delays monitors' events rather than its ingest or
  // queries, and a saturated one still moves them on. Priority shares the cores, not the memory
  // system: on 2 cores an import beside 10,000 monitors' kernel still ran slower with nice 19,
  // SCHED_IDLE or one worker alike (bench:monitors).
  static Pool& background();

 private:
  struct Job {
    size_t n;
    const std::function<void(size_t)>* fn;
    std::atomic<size_t> next{0}, done{0};
    std::exception_ptr error;
    std::mutex error_mu;
  };
  void work(Job& job);
  void loop();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, finished_;
  std::deque<std::shared_ptr<Job>> jobs_;
  bool stop_ = false;
  bool caller_works_ = true;
  std::atomic<size_t> running_{0};
};

// Cores this process may run on (its CPU affinity), at least 1.
size_t cores();

// Lowers the calling thread's priority (nice 5, once per thread): a search or build thread the
// event loop wakes must not take the core from it. At equal priority on 2 cores, a woken worker
// preempted the loop thread that had just handed it a query (~50 µs a query on the loop,
// bench:load); SCHED_BATCH avoided that but, under EEVDF, kept the loop waiting behind range
// passes (GET /v1/sources p99 9 -> 39 ms beside them).
void batch_thread();
// Raises the calling thread's niceness to `nice` if it is lower (best effort).
void nice_thread(int nice);

}  // namespace nm
