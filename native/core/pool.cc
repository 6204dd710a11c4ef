#include "pool.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace nm {

namespace {
constexpr int kWorkerNice = 5;
constexpr int kBackgroundNice = 19;
}

size_t cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return (size_t)n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

void nice_thread(int nice) {
  // Linux niceness is per thread: raise this one's, best effort (unchanged if refused).
  errno = 0;
  int now = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
  if (errno == 0 && now < nice) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

void batch_thread() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  nice_thread(kWorkerNice);
}

Pool::Pool(size_t width) {
  if (width == 0) width = cores();
  for (size_t i = 1; i < width; i++)
    workers_.emplace_back([this] {
      batch_thread();
      loop();
    });
}

Pool::Pool(size_t workers, int nice) : caller_works_(false) {
  if (workers == 0) workers = cores();
  for (size_t i = 0; i < workers; i++)
    workers_.emplace_back([this, nice] {
      nice_thread(nice);
      loop();
    });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

Pool& Pool::shared() {
  static Pool pool;
  return pool;
}

Pool& Pool::background() {
  static Pool pool(0, kBackgroundNice);
  return pool;
}

void Pool::work(Job& job) {
  for (size_t i; (i = job.next.fetch_add(1)) < job.n;) {
    try {
      (*job.fn)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mu);
      if (!job.error) job.error = std::current_exception();
    }
    if (job.done.fetch_add(1) + 1 == job.n) {
      std::lock_guard<std::mutex> lock(mu_);
      finished_.notify_all();
    }
  }
}

void Pool::loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      job = jobs_.front();
      // A job stays queued while it has tasks left, so idle workers keep joining it.
      if (job->next.load() >= job->n) {
        jobs_.pop_front();
        continue;
      }
    }
    work(*job);
  }
}

void Pool::run(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  running_.fetch_add(1, std::memory_order_relaxed);
  struct Done {
    std::atomic<size_t>& n;
    ~Done() { n.fetch_sub(1, std::memory_order_relaxed); }
  } done{running_};
  auto job = std::make_shared<Job>();
  job->n = n;
  job->fn = &fn;
  if ((n > 1 || !caller_works_) && !workers_.empty()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(job);
    }
    wake_.notify_all();
  }
  if (caller_works_ || workers_.empty()) work(*job);
  {
    std::unique_lock<std::mutex> lock(mu_);
    finished_.wait(lock, [&] { return job->done.load() == job->n; });
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (*it == job) {
        jobs_.erase(it);
        break;
      }
  }
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace nm
