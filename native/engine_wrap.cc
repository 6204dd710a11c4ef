#include "engine_wrap.h"

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "core/kernels.h"
#include "core/monitors.h"
#include "core/pool.h"
#include "core/segment.h"

namespace {

using nm::kDims;

// ---- argument conversion (cheap checks stay here: a wrong length must never reach a kernel) ----

template <typename T>
const T* typed(const Napi::Value& v, napi_typedarray_type type, size_t* len, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    throw Napi::TypeError::New(v.Env(), std::string(what) + " has the wrong type");
  auto a = v.As<Napi::TypedArray>();
  *len = a.ElementLength();
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(a.ArrayBuffer().Data()) + a.ByteOffset());
}

uint64_t as_id(double d, Napi::Env env) {
  if (!(d >= 0) || d > 9007199254740991.0 || std::floor(d) != d) throw Napi::RangeError::New(env, "ids must be integers in [0, 2^53)");
  return (uint64_t)d;
}

nm::Filter to_filter(const Napi::Value& v) {
  nm::Filter f;
  if (v.IsUndefined() || v.IsNull()) return f;
  if (!v.IsObject()) throw Napi::TypeError::New(v.Env(), "filter must be an object");
  auto o = v.As<Napi::Object>();
  if (o.Has("tmin") && !o.Get("tmin").IsUndefined()) f.tmin = (int64_t)o.Get("tmin").As<Napi::Number>().DoubleValue();
  if (o.Has("tmax") && !o.Get("tmax").IsUndefined()) f.tmax = (int64_t)o.Get("tmax").As<Napi::Number>().DoubleValue();
  if (o.Has("firstOnly")) f.first_only = o.Get("firstOnly").ToBoolean();
  if (o.Has("labelMin") && !o.Get("labelMin").IsUndefined()) f.lmin = as_id(o.Get("labelMin").ToNumber().DoubleValue(), v.Env());
  if (o.Has("labelMax") && !o.Get("labelMax").IsUndefined()) f.lmax = as_id(o.Get("labelMax").ToNumber().DoubleValue(), v.Env());
  if (o.Has("sources") && !o.Get("sources").IsUndefined() && !o.Get("sources").IsNull()) {
    size_t n;
    const uint8_t* p = typed<uint8_t>(o.Get("sources"), napi_uint8_array, &n, "filter.sources");
    f.sources.assign(p, p + n);
    // An all-zero bitmap must mean "nothing", not "no filter" (empty is "all").
    if (f.sources.empty()) f.sources.push_back(0);
  }
  return f;
}

// A cap: a non-negative integer, or Infinity / absent for none.
size_t to_cap(const Napi::Value& v) {
  if (v.IsUndefined()) return SIZE_MAX;
  if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), "spec.cap must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (d == INFINITY) return SIZE_MAX;
  if (!(d >= 0) || std::floor(d) != d || d > 9007199254740991.0) throw Napi::RangeError::New(v.Env(), "spec.cap must be a non-negative integer or Infinity");
  return (size_t)d;
}

// An optional whole-number option in [0, max]; a wrong type or range is a RangeError.
uint64_t count_option(const Napi::Object& o, const char* name, double max, uint64_t fallback) {
  Napi::Value v = o.Get(name);
  if (v.IsUndefined()) return fallback;
  double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : NAN;
  if (!(d >= 0 && d <= max) || std::floor(d) != d) throw Napi::RangeError::New(o.Env(), std::string(name) + " must be an integer in [0, " + std::to_string((uint64_t)max) + "]");
  return (uint64_t)d;
}

double real_option(const Napi::Object& o, const char* name, double min, double max, double fallback) {
  Napi::Value v = o.Get(name);
  if (v.IsUndefined()) return fallback;
  double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : NAN;
  if (!(d >= min && d <= max)) throw Napi::RangeError::New(o.Env(), std::string(name) + " must be a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return d;
}

Napi::Object hits_to_js(Napi::Env env, const std::vector<nm::Hit>& hits) {
  auto ords = Napi::Float64Array::New(env, hits.size());
  auto labels = Napi::Float64Array::New(env, hits.size());
  auto scores = Napi::Float32Array::New(env, hits.size());
  for (size_t i = 0; i < hits.size(); i++) {
    ords[i] = (double)hits[i].ord;
    labels[i] = (double)hits[i].label;
    scores[i] = hits[i].score;
  }
  auto o = Napi::Object::New(env);
  o.Set("ords", ords);
  o.Set("labels", labels);
  o.Set("scores", scores);
  return o;
}

// A top-k's answer as JS: {ords, labels, scores, complete, plan, probe}.
Napi::Object answer_to_js(Napi::Env env, const nm::Engine::TopkAnswer& a, const nm::Engine::TopkRequest& r) {
  auto o = hits_to_js(env, a.hits);
  o.Set("complete", Napi::Boolean::New(env, a.complete));
  const char* plan = r.mode == nm::Engine::Mode::Scan ? "scan"
                   : r.mode == nm::Engine::Mode::Index ? (a.far ? "far" : "index")
                   : a.plan == nm::Engine::Plan::Scan ? "scan" : a.plan == nm::Engine::Plan::ScanFar ? "scan-far"
                   : a.plan == nm::Engine::Plan::Index ? "index" : "index-then-scan";
  o.Set("plan", Napi::String::New(env, plan));
  auto p = Napi::Object::New(env);
  p.Set("lists", (double)a.probe.lists);
  p.Set("rows", (double)a.probe.rows);
  p.Set("allowed", (double)a.probe.allowed);
  p.Set("pending", (double)a.probe.pending);
  p.Set("rescored", (double)a.probe.rescored);
  p.Set("threads", (double)a.probe.threads);
  o.Set("probe", p);
  return o;
}

// ---- workers: Execute() never touches N-API; errors go through SetError ----

class Worker : public Napi::AsyncWorker {
 public:
  Worker(Napi::Env env, std::function<void()> run, std::function<Napi::Value(Napi::Env)> done)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), run_(std::move(run)), done_(std::move(done)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    nm::batch_thread();
    try {
      run_();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(done_(Env())); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::function<void()> run_;
  std::function<Napi::Value(Napi::Env)> done_;
};

Napi::Promise queue(Napi::Env env, std::function<void()> run, std::function<Napi::Value(Napi::Env)> done) {
  auto* w = new Worker(env, std::move(run), std::move(done));
  auto p = w->Promise();
  w->Queue();
  return p;
}

// ---- top-k calls: two long-lived dispatch threads per engine ----

// Top-k calls go to threads of the engine's own, not to libuv's pool: on this project's
// 2-core virtualised benchmark box, handing a call to a sleeping libuv thread cost the event
// loop 97-147 µs (README, "Threads"), and under load these threads are still at work when the
// next call comes, so a call only queues. Each turn of a thread takes every call queued and
// answers them as one Engine::topk_many; two threads, so one turn's last query never leaves the
// other core idle while calls wait. Answers go back through one thread-safe function, whose callback
// settles their promises on the event loop; a callback holds the dispatch alive, so one still
// queued when the engine is closed and collected finds it there.
class TopkDispatch : public std::enable_shared_from_this<TopkDispatch> {
 public:
  using Requests = std::shared_ptr<std::vector<nm::Engine::TopkRequest>>;

  TopkDispatch(Napi::Env env, std::shared_ptr<nm::Engine> engine) : engine_(std::move(engine)) {
    tsfn_ = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "newsmatch-topk", 0, 1);
    // Referenced only while calls are out (submit, settle): an idle engine keeps no process alive.
    tsfn_.Unref(env);
    for (auto& t : threads_) t = std::thread([this] { loop(); });
  }
  ~TopkDispatch() { stop(); }
  TopkDispatch(const TopkDispatch&) = delete;
  TopkDispatch& operator=(const TopkDispatch&) = delete;

  // On the event loop. `queries` holds the floats the requests point into until they are
  // answered; the promise settles with an array of answers (`many`) or the one answer.
  Napi::Value submit(Napi::Env env, std::shared_ptr<std::vector<float>> queries, Requests reqs, bool many) {
    auto job = std::make_unique<Job>();
    job->queries = std::move(queries), job->reqs = std::move(reqs), job->many = many;
    napi_value promise;
    NAPI_THROW_IF_FAILED(env, napi_create_promise(env, &job->deferred, &promise), Napi::Value());
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        napi_reject_deferred(env, job->deferred, Napi::Error::New(env, "the search engine is closed").Value());
        return Napi::Value(env, promise);
      }
      queue_.push_back(std::move(job));
      wake = idle_ > 0;
    }
    // As a libuv work item would, a call out keeps the process alive until it is answered.
    if (out_++ == 0) tsfn_.Ref(env);
    if (wake) cv_.notify_one();
    return Napi::Value(env, promise);
  }

  // Answers what is queued (an engine closed meanwhile rejects it), then ends the threads. On
  // the event loop (EngineWrap's Close and destructor); the answers settle at its next turn.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    tsfn_.Release();
  }

 private:
  struct Job {
    std::shared_ptr<std::vector<float>> queries;
    Requests reqs;
    napi_deferred deferred = nullptr;
    bool many = true;
    std::vector<nm::Engine::TopkAnswer> answers;
    std::string error;
  };

  void loop() {
    nm::batch_thread();
    for (;;) {
      std::vector<std::unique_ptr<Job>> batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        while (queue_.empty() && !stopping_) {
          idle_++;
          cv_.wait(lock);
          idle_--;
        }
        if (queue_.empty()) return;
        batch.swap(queue_);
      }
      std::vector<nm::Engine::TopkRequest> all;
      for (auto& j : batch) all.insert(all.end(), j->reqs->begin(), j->reqs->end());
      try {
        std::vector<nm::Engine::TopkAnswer> answers = engine_->topk_many(all);
        auto at = answers.begin();
        for (auto& j : batch) j->answers.assign(std::make_move_iterator(at), std::make_move_iterator(at + j->reqs->size())), at += j->reqs->size();
      } catch (const std::exception& e) {
        for (auto& j : batch) j->error = e.what();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto& j : batch) done_.push_back(std::move(j));
      }
      // One callback settles every call answered by then (one queued meanwhile may find nothing left).
      tsfn_.NonBlockingCall([self = shared_from_this()](Napi::Env env, Napi::Function) { self->settle(env); });
    }
  }

  // On the event loop.
  void settle(Napi::Env env) {
    std::vector<std::unique_ptr<Job>> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done.swap(done_);
    }
    for (auto& j : done) {
      Napi::HandleScope scope(env);
      if (!j->error.empty()) {
        napi_reject_deferred(env, j->deferred, Napi::Error::New(env, j->error).Value());
      } else if (!j->many) {
        napi_resolve_deferred(env, j->deferred, answer_to_js(env, j->answers[0], (*j->reqs)[0]));
      } else {
        auto arr = Napi::Array::New(env, j->answers.size());
        for (size_t i = 0; i < j->answers.size(); i++) arr.Set(i, answer_to_js(env, j->answers[i], (*j->reqs)[i]));
        napi_resolve_deferred(env, j->deferred, arr);
      }
      if (--out_ == 0) tsfn_.Unref(env);
    }
  }

  std::shared_ptr<nm::Engine> engine_;
  Napi::ThreadSafeFunction tsfn_;
  std::thread threads_[2];
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Job>> queue_, done_;  // under mu_
  size_t idle_ = 0;                                 // threads waiting; under mu_
  bool stopping_ = false;                           // under mu_
  size_t out_ = 0;                                  // calls not yet settled; the event loop's only
};

class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "Engine",
                       {InstanceMethod("append", &EngineWrap::Append), InstanceMethod("indexPending", &EngineWrap::IndexPending),
                        InstanceMethod("seal", &EngineWrap::Seal), InstanceMethod("compact", &EngineWrap::Compact),
                        InstanceMethod("saveIndex", &EngineWrap::SaveIndex), InstanceMethod("range", &EngineWrap::Range),
                        InstanceMethod("topk", &EngineWrap::TopK), InstanceMethod("topkMany", &EngineWrap::TopKMany),
                        InstanceMethod("count", &EngineWrap::Count), InstanceMethod("prepareMonitors", &EngineWrap::PrepareMonitors),
                        InstanceMethod("scoreMonitors", &EngineWrap::ScoreMonitors),
                        InstanceMethod("scoreMonitorLabels", &EngineWrap::ScoreMonitorLabels), InstanceMethod("monitorDots", &EngineWrap::MonitorDots),
                        InstanceMethod("estimate", &EngineWrap::Estimate), InstanceMethod("stats", &EngineWrap::Stats),
                        InstanceMethod("close", &EngineWrap::Close)});
  }

  explicit EngineWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "Engine(options) needs an options object");
    auto o = info[0].As<Napi::Object>();
    nm::EngineOptions opt;
    if (!o.Get("dir").IsString()) throw Napi::TypeError::New(env, "options.dir must be a string");
    opt.dir = o.Get("dir").As<Napi::String>();
    opt.lists = count_option(o, "lists", 65536, 0);
    opt.index_min_rows = count_option(o, "indexMinRows", 1e15, opt.index_min_rows);
    opt.threads = count_option(o, "threads", 1024, 0);
    try {
      engine_ = std::make_shared<nm::Engine>(opt);
    } catch (const std::exception& e) {
      throw Napi::Error::New(env, e.what());
    }
  }
  // Collected without a close: its dispatch threads end here (the engine closes with its last owner).
  ~EngineWrap() override {
    if (dispatch_) dispatch_->stop();
  }

 private:
  // append({labels, ords, times, sources, first, vectors}): copies rows into the delta.
  Napi::Value Append(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "append(rows) needs an object");
    auto o = info[0].As<Napi::Object>();
    size_t n, m;
    const double* labels = typed<double>(o.Get("labels"), napi_float64_array, &n, "rows.labels");
    const double* ords = typed<double>(o.Get("ords"), napi_float64_array, &m, "rows.ords");
    if (m != n) throw Napi::RangeError::New(env, "rows.ords length differs from rows.labels");
    const double* times = typed<double>(o.Get("times"), napi_float64_array, &m, "rows.times");
    if (m != n) throw Napi::RangeError::New(env, "rows.times length differs from rows.labels");
    const uint32_t* sources = typed<uint32_t>(o.Get("sources"), napi_uint32_array, &m, "rows.sources");
    if (m != n) throw Napi::RangeError::New(env, "rows.sources length differs from rows.labels");
    const uint8_t* first = typed<uint8_t>(o.Get("first"), napi_uint8_array, &m, "rows.first");
    if (m != n) throw Napi::RangeError::New(env, "rows.first length differs from rows.labels");
    const float* vectors = typed<float>(o.Get("vectors"), napi_float32_array, &m, "rows.vectors");
    if (m != n * kDims) throw Napi::RangeError::New(env, "rows.vectors must hold labels.length * 1024 floats");
    std::vector<nm::RowInput> rows(n);
    for (size_t i = 0; i < n; i++)
      rows[i] = {as_id(labels[i], env), as_id(ords[i], env), (int64_t)times[i], sources[i], first[i], vectors + i * kDims};
    try {
      engine_->append(rows);
    } catch (const std::exception& e) {
      throw Napi::Error::New(env, e.what());
    }
    return env.Undefined();
  }

  // indexPending(max) → Promise<rows filed>
  Napi::Value IndexPending(const Napi::CallbackInfo& info) {
    double d = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : INFINITY;
    if (!(d >= 0)) throw Napi::RangeError::New(info.Env(), "indexPending(max): max must be a non-negative number");
    size_t max = d >= 1e15 ? SIZE_MAX : (size_t)d;
    auto e = engine_;
    auto added = std::make_shared<size_t>(0);
    return queue(info.Env(), [e, max, added] { *added = e->index_pending(max); },
                 [added](Napi::Env env) { return Napi::Number::New(env, (double)*added); });
  }

  Napi::Value Seal(const Napi::CallbackInfo& info) {
    auto e = engine_;
    return queue(info.Env(), [e] { e->seal(); }, [](Napi::Env env) { return env.Undefined(); });
  }

  Napi::Value Compact(const Napi::CallbackInfo& info) {
    auto e = engine_;
    return queue(info.Env(), [e] { e->compact(); }, [](Napi::Env env) { return env.Undefined(); });
  }

  Napi::Value SaveIndex(const Napi::CallbackInfo& info) {
    auto e = engine_;
    return queue(info.Env(), [e] { e->save_index(); }, [](Napi::Env env) { return env.Undefined(); });
  }

  // range(queries: Float32Array (q*1024), specs: [{threshold, cap, filter}]) → Promise<[{ords, labels, scores, overflow}]>
  // A batch's arguments, checked: (queries: Float32Array of specs.length x 1024, specs: object[]).
  // The queries are copied (the worker reads them after this call returns).
  static std::shared_ptr<std::vector<float>> batch_args(const Napi::CallbackInfo& info, const char* call, Napi::Array* specs) {
    Napi::Env env = info.Env();
    size_t n;
    const float* q = typed<float>(info[0], napi_float32_array, &n, "queries");
    if (!info[1].IsArray()) throw Napi::TypeError::New(env, std::string(call) + "(queries, specs) needs an array of specs");
    *specs = info[1].As<Napi::Array>();
    if (n != specs->Length() * kDims) throw Napi::RangeError::New(env, "queries must hold specs.length * 1024 floats");
    for (uint32_t i = 0; i < specs->Length(); i++)
      if (!specs->Get(i).IsObject()) throw Napi::TypeError::New(env, "each spec must be an object");
    return std::make_shared<std::vector<float>>(q, q + n);
  }

  Napi::Value Range(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Array specs;
    auto qs = batch_args(info, "range", &specs);
    size_t nq = specs.Length();
    auto queries = std::make_shared<std::vector<nm::RangeQuery>>(nq);
    for (size_t i = 0; i < nq; i++) {
      auto s = specs.Get(i).As<Napi::Object>();
      (*queries)[i].q = qs->data() + i * kDims;
      if (!s.Get("threshold").IsNumber()) throw Napi::TypeError::New(env, "spec.threshold must be a number");
      (*queries)[i].threshold = s.Get("threshold").As<Napi::Number>().FloatValue();
      (*queries)[i].cap = to_cap(s.Get("cap"));
      (*queries)[i].filter = to_filter(s.Get("filter"));
    }
    auto e = engine_;
    auto out = std::make_shared<std::vector<nm::RangeResult>>();
    return queue(env, [e, qs, queries, out] { *out = e->range(*queries); },
                 [out](Napi::Env env) {
                   auto arr = Napi::Array::New(env, out->size());
                   for (size_t i = 0; i < out->size(); i++) {
                     auto o = hits_to_js(env, (*out)[i].hits);
                     o.Set("overflow", Napi::Boolean::New(env, (*out)[i].overflow));
                     arr.Set(i, o);
                   }
                   return arr;
                 });
  }

  // One top-k's arguments, checked: (query, k, minScore, filter, mode, options?).
  static nm::Engine::TopkRequest topk_request(Napi::Env env, const float* q, const Napi::Value& kv, const Napi::Value& mv, const Napi::Value& fv,
                                              const Napi::Value& modev, const Napi::Value& ov) {
    if (!kv.IsNumber() || !mv.IsNumber()) throw Napi::TypeError::New(env, "topk(query, k, minScore, ...) needs numbers");
    double kd = kv.As<Napi::Number>().DoubleValue();
    if (!(kd >= 0) || std::floor(kd) != kd || kd > 1e6) throw Napi::RangeError::New(env, "k must be an integer in [0, 1e6]");
    nm::Engine::TopkRequest r;
    r.k = (size_t)kd;
    r.min_score = mv.As<Napi::Number>().FloatValue();
    r.filter = to_filter(fv);
    std::string mode = modev.IsString() ? modev.As<Napi::String>().Utf8Value() : "scan";
    if (mode == "scan") r.mode = nm::Engine::Mode::Scan;
    else if (mode == "index") r.mode = nm::Engine::Mode::Index;
    else if (mode == "auto") r.mode = nm::Engine::Mode::Auto;
    else throw Napi::TypeError::New(env, "mode must be scan, index or auto");
    if (ov.IsObject()) {
      auto o = ov.As<Napi::Object>();
      r.options.scan_max_rows = count_option(o, "scanMaxRows", 1e15, r.options.scan_max_rows);
      r.options.probe_max_rows = count_option(o, "probeMaxRows", 1e15, r.options.probe_max_rows);
      r.options.probe_min_rows = count_option(o, "probeMinRows", 1e15, r.options.probe_min_rows);
      r.options.probe_delta = real_option(o, "probeDelta", 0, 2, r.options.probe_delta);
      r.options.far_score = real_option(o, "farScore", -1, 1, r.options.far_score);
    } else if (!ov.IsUndefined() && !ov.IsNull()) {
      throw Napi::TypeError::New(env, "topk options must be an object");
    }
    r.q = q;
    return r;
  }

  // topk(query, k, minScore, filter, mode: 'scan' | 'index' | 'auto', options?) →
  // Promise<{ords, labels, scores, complete, plan, probe: {lists, rows, allowed, pending, rescored}}>
  Napi::Value TopK(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    size_t n;
    const float* q = typed<float>(info[0], napi_float32_array, &n, "query");
    if (n != kDims) throw Napi::RangeError::New(env, "query must hold 1024 floats");
    auto query = std::make_shared<std::vector<float>>(q, q + kDims);
    auto reqs = std::make_shared<std::vector<nm::Engine::TopkRequest>>();
    reqs->push_back(topk_request(env, query->data(), info[1], info[2], info[3], info[4], info[5]));
    return dispatch(env)->submit(env, query, reqs, false);
  }

  // topkMany(queries: Float32Array (n*1024), specs: [{k, minScore, filter, mode, options}]) →
  // Promise<[{...as topk}]>: n top-k queries answered together, over the engine's threads.
  Napi::Value TopKMany(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Array specs;
    auto qs = batch_args(info, "topkMany", &specs);
    auto reqs = std::make_shared<std::vector<nm::Engine::TopkRequest>>();
    for (size_t i = 0; i < specs.Length(); i++) {
      auto s = specs.Get(i).As<Napi::Object>();
      reqs->push_back(topk_request(env, qs->data() + i * kDims, s.Get("k"), s.Get("minScore"), s.Get("filter"), s.Get("mode"), s.Get("options")));
    }
    return dispatch(env)->submit(env, qs, reqs, true);
  }

  TopkDispatch* dispatch(Napi::Env env) {
    if (!dispatch_) dispatch_ = std::make_shared<TopkDispatch>(env, engine_);
    return dispatch_.get();
  }

  Napi::Value Count(const Napi::CallbackInfo& info) {
    nm::Filter f = to_filter(info[0]);  // throws TypeError for a malformed filter
    try {
      return Napi::Number::New(info.Env(), (double)engine_->count(f));
    } catch (const std::exception& e) {
      throw Napi::Error::New(info.Env(), e.what());
    }
  }

  Napi::Value Estimate(const Napi::CallbackInfo& info) {
    nm::Filter f = to_filter(info[0]);
    try {
      return Napi::Number::New(info.Env(), (double)engine_->estimate(f));
    } catch (const std::exception& e) {
      throw Napi::Error::New(info.Env(), e.what());
    }
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (dispatch_) dispatch_->stop();
    engine_->close();
    return info.Env().Undefined();
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    nm::EngineStats s = engine_->stats();
    auto o = Napi::Object::New(env);
    o.Set("segments", (double)s.segments);
    o.Set("segmentRows", (double)s.segment_rows);
    o.Set("deltaRows", (double)s.delta_rows);
    o.Set("indexLists", (double)s.index_lists);
    o.Set("indexRows", (double)s.index_rows);
    o.Set("indexPending", (double)s.index_pending);
    o.Set("indexSaved", (double)s.index_saved);
    o.Set("trainedRows", (double)s.trained_rows);
    o.Set("nextLabel", (double)s.next_label);
    o.Set("threads", (double)s.threads);
    o.Set("isa", s.isa);
    return o;
  }

  // ---- monitors (core/monitors.h): a prepared set is an External tagged as ours ----

  using MonitorsPtr = std::shared_ptr<const nm::MonitorSet>;
  static constexpr napi_type_tag kMonitorsTag = {0x6e6d6d6f6e69746fULL, 0x7273657476310001ULL};

  static void check_finite(Napi::Env env, const float* v, size_t n, const char* what) {
    size_t bad = nm::first_nonfinite(v, n);
    if (bad < n) throw Napi::RangeError::New(env, std::string(what) + "[" + std::to_string(bad) + "] is not a finite number");
  }

  static MonitorsPtr monitors_arg(const Napi::Value& v) {
    if (!v.IsExternal() || !v.As<Napi::External<MonitorsPtr>>().CheckTypeTag(&kMonitorsTag))
      throw Napi::TypeError::New(v.Env(), "monitors must be a set made by prepareMonitors");
    return *v.As<Napi::External<MonitorsPtr>>().Data();
  }

  // A batch of chunks, checked and copied (the worker reads it after this call returns):
  // {vectors: Float32Array (n * 1024), ords: Float64Array (n), labels: Float64Array (n)}.
  struct ChunkCopy {
    std::vector<float> vec;
    std::vector<uint64_t> ord, label;
    nm::ChunkBatch batch() const { return {vec.data(), ord.data(), label.data(), ord.size()}; }
  };
  static std::shared_ptr<ChunkCopy> chunks_arg(const Napi::Value& v, bool ids) {
    Napi::Env env = v.Env();
    if (!v.IsObject()) throw Napi::TypeError::New(env, "chunks must be an object {vectors, ords, labels}");
    auto o = v.As<Napi::Object>();
    size_t nv, n, m;
    const float* vec = typed<float>(o.Get("vectors"), napi_float32_array, &nv, "chunks.vectors");
    if (nv % kDims != 0) throw Napi::RangeError::New(env, "chunks.vectors must hold a multiple of 1024 floats");
    n = nv / kDims;
    check_finite(env, vec, nv, "chunks.vectors");
    auto c = std::make_shared<ChunkCopy>();
    if (ids) {
      const double* ords = typed<double>(o.Get("ords"), napi_float64_array, &m, "chunks.ords");
      if (m != n) throw Napi::RangeError::New(env, "chunks.ords must hold one ord per chunk (vectors.length / 1024)");
      const double* labels = typed<double>(o.Get("labels"), napi_float64_array, &m, "chunks.labels");
      if (m != n) throw Napi::RangeError::New(env, "chunks.labels must hold one label per chunk (vectors.length / 1024)");
      c->ord.resize(n), c->label.resize(n);
      for (size_t i = 0; i < n; i++) c->ord[i] = as_id(ords[i], env), c->label[i] = as_id(labels[i], env);
    } else {
      c->ord.resize(n);
    }
    c->vec.assign(vec, vec + nv);
    return c;
  }

  // Monitors' work runs on the background pool (pool.h), at low priority behind ingest and
  // queries.

  // prepareMonitors({vectors: Float32Array (m * 1024), floors: Float32Array (m)}) → Promise<MonitorSet>:
  // the standing queries quantised once.
  Napi::Value PrepareMonitors(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "prepareMonitors(monitors) needs an object {vectors, floors}");
    auto o = info[0].As<Napi::Object>();
    size_t nv, nf;
    const float* vec = typed<float>(o.Get("vectors"), napi_float32_array, &nv, "monitors.vectors");
    if (nv % kDims != 0) throw Napi::RangeError::New(env, "monitors.vectors must hold a multiple of 1024 floats");
    const float* floors = typed<float>(o.Get("floors"), napi_float32_array, &nf, "monitors.floors");
    if (nf != nv / kDims) throw Napi::RangeError::New(env, "monitors.floors must hold one floor per monitor (vectors.length / 1024)");
    if (nf > UINT32_MAX) throw Napi::RangeError::New(env, "at most 2^32 - 1 monitors");
    check_finite(env, vec, nv, "monitors.vectors");
    check_finite(env, floors, nf, "monitors.floors");
    auto vcopy = std::make_shared<std::vector<float>>(vec, vec + nv);
    auto fcopy = std::make_shared<std::vector<float>>(floors, floors + nf);
    auto e = engine_;
    auto out = std::make_shared<MonitorsPtr>();
    return queue(env, [e, vcopy, fcopy, out] {
                   *out = std::make_shared<const nm::MonitorSet>(nm::prepare_monitors(vcopy->data(), fcopy->data(), fcopy->size(), nm::Pool::background()));
                 },
                 [out](Napi::Env env) -> Napi::Value {
                   auto ext = Napi::External<MonitorsPtr>::New(env, new MonitorsPtr(*out), [](Napi::Env, MonitorsPtr* p) { delete p; });
                   ext.TypeTag(&kMonitorsTag);
                   return ext;
                 });
  }

  // scoreMonitors(set, {vectors, ords, labels}) → Promise<{monitor: Uint32Array, ord: Float64Array,
  // label: Float64Array, score: Float32Array, rescored: number}>: every (monitor, revision) of the
  // batch whose best chunk reaches the monitor's floor, by monitor then ord.
  Napi::Value ScoreMonitors(const Napi::CallbackInfo& info) {
    MonitorsPtr set = monitors_arg(info[0]);
    auto chunks = chunks_arg(info[1], true);
    auto out = std::make_shared<nm::MonitorResult>();
    return queue(info.Env(), [set, chunks, out] { *out = nm::score_monitors(*set, chunks->batch(), nm::Pool::background()); }, matches_of(out));
  }

  // scoreMonitorLabels(set, from, to) → the same for the chunks this engine holds with labels in
  // [from, to): a window of the ingest sequence, read from the engine's own rows.
  Napi::Value ScoreMonitorLabels(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    MonitorsPtr set = monitors_arg(info[0]);
    if (!info[1].IsNumber() || !info[2].IsNumber()) throw Napi::TypeError::New(env, "scoreMonitorLabels(set, from, to) needs two labels");
    uint64_t from = as_id(info[1].As<Napi::Number>().DoubleValue(), env), to = as_id(info[2].As<Napi::Number>().DoubleValue(), env);
    auto e = engine_;
    auto out = std::make_shared<nm::MonitorResult>();
    return queue(env, [e, set, from, to, out] { *out = nm::score_monitor_labels(*set, *e, from, to, nm::Pool::background()); }, matches_of(out));
  }

  static std::function<Napi::Value(Napi::Env)> matches_of(std::shared_ptr<nm::MonitorResult> out) {
    return [out](Napi::Env env) -> Napi::Value {
      const auto& h = out->matches;
      auto monitor = Napi::Uint32Array::New(env, h.size());
      auto ord = Napi::Float64Array::New(env, h.size());
      auto label = Napi::Float64Array::New(env, h.size());
      auto score = Napi::Float32Array::New(env, h.size());
      for (size_t i = 0; i < h.size(); i++) monitor[i] = h[i].monitor, ord[i] = (double)h[i].ord, label[i] = (double)h[i].label, score[i] = h[i].score;
      auto o = Napi::Object::New(env);
      o.Set("monitor", monitor);
      o.Set("ord", ord);
      o.Set("label", label);
      o.Set("score", score);
      o.Set("rescored", (double)out->rescored);
      return o;
    };
  }

  // monitorDots(set, {vectors}) → Promise<checksum>: the same int8 tiles with no bound test and
  // no rescoring, the floor bench/monitors.ts measures scoreMonitors against.
  Napi::Value MonitorDots(const Napi::CallbackInfo& info) {
    MonitorsPtr set = monitors_arg(info[0]);
    auto chunks = chunks_arg(info[1], false);
    auto sum = std::make_shared<int64_t>(0);
    return queue(info.Env(), [set, chunks, sum] { *sum = nm::monitor_dots(*set, chunks->vec.data(), chunks->ord.size(), nm::Pool::background()); },
                 [sum](Napi::Env env) { return Napi::Number::New(env, (double)*sum); });
  }

  std::shared_ptr<TopkDispatch> dispatch_;  // made at the first top-k call
  std::shared_ptr<nm::Engine> engine_;
};

}  // namespace

Napi::Function InitEngine(Napi::Env env) { return EngineWrap::Init(env); }

// measureBandwidth(bytes, threads?) → Promise<GB/s>: the best of several passes that read a
// buffer the way the scan reads its int8 column, split over `threads` threads (default 1).
Napi::Value MeasureBandwidth(const Napi::CallbackInfo& info) {
  size_t bytes = info[0].IsNumber() ? (size_t)info[0].As<Napi::Number>().DoubleValue() : (size_t)1 << 30;
  size_t threads = info[1].IsNumber() ? std::max<size_t>(1, info[1].As<Napi::Number>().Uint32Value()) : 1;
  bytes &= ~(size_t)(64 * threads - 1);
  auto gbps = std::make_shared<double>(0);
  return queue(info.Env(),
               [bytes, threads, gbps] {
                 // In huge pages, as the engine maps its columns (Mapping): the floor reads
                 // memory the way the scan does, TLB included.
                 size_t len = bytes + nm::kHugePage;
                 void* m = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                 if (m == MAP_FAILED) throw std::runtime_error("measureBandwidth: out of memory");
                 struct Unmap {
                   void* p;
                   size_t n;
                   ~Unmap() { ::munmap(p, n); }
                 } unmap{m, len};
                 uint8_t* data = reinterpret_cast<uint8_t*>(nm::huge_up((uintptr_t)m));
                 ::madvise(data, bytes, MADV_HUGEPAGE);
                 std::memset(data, 1, bytes);
                 nm::Pool pool(threads);
                 std::atomic<uint64_t> sink{0};
                 for (int pass = 0; pass < 5; pass++) {
                   auto t0 = std::chrono::steady_clock::now();
                   pool.run(threads, [&](size_t t) { sink += nm::kernels().sum_bytes(data + bytes / threads * t, bytes / threads); });
                   double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                   *gbps = std::max(*gbps, bytes / s / 1e9);
                 }
               },
               [gbps](Napi::Env env) { return Napi::Number::New(env, *gbps); });
}

// setIsa('auto' | 'generic' | 'avx2' | 'avx512' | 'avx512vnni' | 'amx') → the ISA now in use, or throws if unsupported.
Napi::Value SetIsa(const Napi::CallbackInfo& info) {
  std::string want = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "auto";
  if (!nm::set_kernels(want.c_str())) throw Napi::Error::New(info.Env(), "this CPU does not support " + want);
  return Napi::String::New(info.Env(), nm::kernels().isa);
}
