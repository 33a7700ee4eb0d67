// Independent replications on worker threads, stoppable from the caller.
//
// The caller's thread does no simulation: it wakes every `poll_ms`, reports
// progress and asks `should_stop` (the Python binding checks for Ctrl-C there,
// holding the GIL only for that moment). Workers see the stop flag between
// events; every worker is joined before this returns, so no thread outlives
// an interrupted run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mmcost::sim {

template <class Result>
struct ReplicationRun {
  std::vector<Result> results;  // index = replication
  bool stopped = false;
};

// run(r, stop) simulates replication r (pure function of r and the inputs).
template <class Result>
ReplicationRun<Result> run_replications(int replications, int threads,
                                        const std::function<Result(int, const std::atomic<bool>&)>& run,
                                        const std::function<bool(int done)>& should_stop, int poll_ms = 100) {
  ReplicationRun<Result> out;
  out.results.resize(static_cast<std::size_t>(replications));
  std::atomic<bool> stop{false};
  std::atomic<int> next{0}, done{0};
  std::exception_ptr error;
  std::mutex mutex;  // guards error; pairs with wake for the caller's waits
  std::condition_variable wake;
  auto worker = [&]() {
    for (;;) {
      const int r = next.fetch_add(1);
      if (r >= replications || stop.load(std::memory_order_relaxed)) return;
      try {
        out.results[static_cast<std::size_t>(r)] = run(r, stop);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        stop = true;
        wake.notify_all();
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        done.fetch_add(1);
      }
      wake.notify_all();
    }
  };
  std::vector<std::thread> pool;
  const int n = threads < 1 ? 1 : (threads > replications ? replications : threads);
  for (int i = 0; i < n; ++i) pool.emplace_back(worker);
  for (;;) {
    {
      // wakes when a replication ends (short runs return at once) or after poll_ms
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait_for(lock, std::chrono::milliseconds(poll_ms),
                    [&] { return done.load() >= replications || stop.load(); });
      if (done.load() >= replications || stop.load()) break;
    }
    if (should_stop && should_stop(done.load())) {
      stop = true;
      out.stopped = true;
      break;
    }
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (should_stop && !out.stopped) should_stop(done.load());  // final progress report
  return out;
}

}  // namespace mmcost::sim
