#include "monitors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "engine.h"
#include "kernels.h"
#include "pool.h"

namespace nm {

namespace {

// Monitor groups (of four, the tile's width) a task scores: 8 groups' codes are 32 KB, which
// stay in L1 while the batch's codes stream past four rows at a time.
constexpr size_t kTaskGroups = 8;
// Rows prepared (quantised, converted) per task.
constexpr size_t kSlice = 64;
// The f16 rescoring's error, relative to |v| |q|: 2^-11 a component (4.88e-4), plus the f32
// accumulation's and the bound test's own roundings (~1e-6), as Prepared::f16_slack.
constexpr double kSlack = 4.9e-4 + 1e-5;

// The batch's chunks as the int8 pass and the rescoring read them; rows padded to a multiple of
// four with zero codes (a padding row's candidates are dropped).
struct Batch {
  size_t n = 0, np = 0;
  std::vector<int8_t> code;    // np * kDims
  std::vector<float> scale;    // np
  std::vector<uint16_t> f16;   // n * kDims (empty for monitor_dots)
  const uint64_t* ord = nullptr;
  const uint64_t* label = nullptr;
  double nmax = 0;             // the largest row norm (1 for unit rows)
  std::vector<uint64_t> own_ord, own_label;  // ord and label's storage when the batch owns them (gathered)
};

Batch prepare_batch(const float* vec, size_t n, bool f16, Pool& pool) {
  const Kernels& K = kernels();
  Batch b;
  b.n = n, b.np = (n + 3) / 4 * 4;
  b.code.assign(b.np * kDims, 0);
  b.scale.assign(b.np, 0.0f);
  if (f16) b.f16.resize(n * kDims);
  std::vector<double> norm(n, 0.0);
  pool.run((n + kSlice - 1) / kSlice, [&](size_t t) {
    for (size_t r = t * kSlice; r < std::min(n, (t + 1) * kSlice); r++) {
      const float* v = vec + r * kDims;
      b.scale[r] = K.quantize_i8(v, b.code.data() + r * kDims, kDims);
      if (f16) K.to_f16(v, b.f16.data() + r * kDims, kDims);
      double s = 0;
      for (size_t i = 0; i < kDims; i++) s += (double)v[i] * v[i];
      norm[r] = std::sqrt(s);
    }
  });
  for (double x : norm) b.nmax = std::max(b.nmax, x);
  return b;
}

// The engine's rows of labels [from, to), copied: their own int8 codes and f16 vectors, so
// nothing is quantised again and a match scores what a search of it returns. The engine's rows
// are unit (RowInput), as its scan's bound assumes.
Batch gather_batch(const Engine& e, uint64_t from, uint64_t to) {
  Batch b;
  // Sized by the rows found, not by the span asked for (labels may be sparse, or far past the
  // engine's last): grown by doubling as the visit goes.
  std::vector<uint64_t>& ord = b.own_ord;
  std::vector<uint64_t>& label = b.own_label;
  size_t n = 0;
  e.visit_labels(from, to, [&](const Cols& c, size_t r) {
    if (n == ord.size()) {
      size_t cap = std::max<size_t>(64, 2 * n);
      b.code.resize(cap * kDims), b.f16.resize(cap * kDims), b.scale.resize(cap), ord.resize(cap), label.resize(cap);
    }
    std::memcpy(b.code.data() + n * kDims, c.i8 + r * kDims, kDims);
    std::memcpy(b.f16.data() + n * kDims, c.f16 + r * kDims, kDims * sizeof(uint16_t));
    b.scale[n] = c.scale[r];
    ord[n] = c.ord[r];
    label[n] = c.label[r];
    n++;
  });
  b.n = n, b.np = (n + 3) / 4 * 4;
  // Padding rows: zero codes and scale (their candidates are dropped).
  b.code.resize(b.np * kDims), b.f16.resize(n * kDims), b.scale.resize(b.np);
  std::fill(b.code.begin() + n * kDims, b.code.end(), 0);
  std::fill(b.scale.begin() + n, b.scale.end(), 0.0f);
  ord.resize(n), label.resize(n);
  b.ord = ord.data(), b.label = label.data();
  b.nmax = 1.0;
  return b;
}

// Four monitors of one tile: codes, sums, and the tile test's terms, as range_batch's groups:
//   row_scale * (q_scale * dot + half_l1) >= floor - fixed
// with fixed = |v| * qerr + kSlack * |v| * |q| for the batch's largest |v| (a padding column
// has floor +inf and never passes).
struct Group {
  const int8_t* qc[4];
  int32_t qs[4];
  float qscale[4], hl[4], fl[4];
  uint32_t q0, qn;
};

std::vector<Group> groups_for(const MonitorSet& s, double nmax) {
  std::vector<Group> gs((s.m + 3) / 4);
  for (size_t g = 0; g < gs.size(); g++) {
    Group& G = gs[g];
    G.q0 = (uint32_t)(g * 4), G.qn = (uint32_t)std::min<size_t>(4, s.m - g * 4);
    for (size_t j = 0; j < 4; j++) {
      size_t q = G.q0 + std::min<size_t>(j, G.qn - 1);
      const Prepared& p = s.prep[q];
      G.qc[j] = p.code, G.qs[j] = p.sum, G.qscale[j] = p.scale, G.hl[j] = p.half_l1;
      double fixed = nmax * (double)s.qerr[q] + kSlack * nmax * (double)s.qnorm[q];
      G.fl[j] = j < G.qn ? (float)((double)s.floor[q] - fixed) : INFINITY;
    }
  }
  return gs;
}

// Tasks: runs of at most kTaskGroups groups, about four per thread when there are enough.
std::vector<std::pair<size_t, size_t>> tasks_for(size_t groups, size_t width) {
  size_t per = std::max<size_t>(1, std::min(kTaskGroups, (groups + width * 4 - 1) / (width * 4)));
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t g = 0; g < groups; g += per) out.push_back({g, std::min(groups, g + per)});
  return out;
}

// Every tile of groups [g0, g1) against every four rows of the batch's [r0, r1) (r0 a multiple
// of four): visit(r, group, dots, one) with dots[x * 4 + j] (or dots[x] for a group of one
// monitor, `one`).
template <class F>
void tiles(const Kernels& K, const Batch& b, size_t r0, size_t r1, const Group* gs, size_t g0, size_t g1, F&& visit) {
  int32_t dots[16];
  for (size_t r = r0; r < r1; r += 4) {
    const int8_t* rows[4] = {b.code.data() + r * kDims, b.code.data() + (r + 1) * kDims, b.code.data() + (r + 2) * kDims,
                             b.code.data() + (r + 3) * kDims};
    for (size_t g = g0; g < g1; g++) {
      const Group& G = gs[g];
      // One monitor: a 4 x 4 tile would compute three padding columns for nothing.
      if (G.qn == 1) {
        K.dot_i8_4x1(rows, G.qc[0], G.qs[0], kDims, dots);
        visit(r, G, dots, true);
      } else {
        K.dot_i8_4x4(rows, G.qc, G.qs, kDims, dots);
        visit(r, G, dots, false);
      }
    }
  }
}

}  // namespace

size_t first_nonfinite(const float* v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!std::isfinite(v[i])) return i;
  return n;
}

MonitorSet prepare_monitors(const float* vec, const float* floors, size_t m, Pool& pool) {
  MonitorSet s;
  s.m = m;
  s.vec.assign(vec, vec + m * kDims);
  s.floor.assign(floors, floors + m);
  s.prep.resize(m);
  s.qerr.resize(m);
  s.qnorm.resize(m);
  pool.run((m + kSlice - 1) / kSlice, [&](size_t t) {
    for (size_t i = t * kSlice; i < std::min(m, (t + 1) * kSlice); i++) {
      const float* q = s.vec.data() + i * kDims;
      Prepared& p = s.prep[i];
      prepare(q, &p);
      double err = 0, nn = 0;
      for (size_t d = 0; d < kDims; d++) {
        double e = (double)q[d] - (double)p.scale * p.code[d];
        err += e * e, nn += (double)q[d] * q[d];
      }
      // Rounded up: the bound must not shrink in the cast.
      s.qerr[i] = std::nextafter((float)std::sqrt(err), INFINITY);
      s.qnorm[i] = std::nextafter((float)std::sqrt(nn), INFINITY);
    }
  });
  return s;
}

// One pass over rows [r0, r1) of the batch: few enough that their codes stay in cache while
// every monitor block reads them.
static MonitorResult score_pass(const MonitorSet& s, const Batch& b, size_t r0, size_t r1, Pool& pool) {
  MonitorResult out;
  if (s.m == 0 || r1 <= r0) return out;
  const Kernels& K = kernels();
  std::vector<Group> gs = groups_for(s, b.nmax);
  auto tasks = tasks_for(gs.size(), pool.width());
  struct Cand {
    uint32_t row;
    float score;
  };
  std::vector<std::vector<MonitorMatch>> found(tasks.size());
  std::vector<uint64_t> rescored(tasks.size(), 0);
  pool.run(tasks.size(), [&](size_t t) {
    auto [g0, g1] = tasks[t];
    size_t q0 = g0 * 4, q1 = std::min(s.m, g1 * 4);
    // The int8 pass collects, per monitor, the rows its bound cannot rule out; the rescoring
    // then reads each monitor's f32 vector once for all of them (taken in tile order, a 4 KB
    // vector came from memory again for nearly every candidate: 44 -> 34 ms at 10,000 x 1,000
    // on 2 busy cores, bench:monitors).
    std::vector<std::vector<uint32_t>> rows(q1 - q0);
    auto take = [&](size_t row, size_t q) {
      if (row < b.n) rows[q - q0].push_back((uint32_t)row);  // not a padding row
    };
    tiles(K, b, r0, r1, gs.data(), g0, g1, [&](size_t r, const Group& G, const int32_t* dots, bool one) {
      if (one) {
        for (size_t x = 0; x < 4; x++)
          if (b.scale[r + x] * (G.qscale[0] * (float)dots[x] + G.hl[0]) >= G.fl[0]) take(r + x, G.q0);
        return;
      }
      for (uint32_t msk = K.tile_mask(dots, b.scale.data() + r, G.qscale, G.hl, G.fl); msk; msk &= msk - 1) {
        unsigned bit = (unsigned)__builtin_ctz(msk);
        take(r + bit / 4, G.q0 + bit % 4);
      }
    });
    uint64_t tried = 0;
    std::vector<std::vector<Cand>> cand(q1 - q0);
    for (size_t q = q0; q < q1; q++) {
      const float* qv = s.vec.data() + q * kDims;
      for (uint32_t row : rows[q - q0]) {
        float sc = K.dot_f16_f32(b.f16.data() + row * kDims, qv, kDims);
        if (sc >= s.floor[q]) cand[q - q0].push_back({row, sc});
      }
      tried += rows[q - q0].size();
    }
    // Per monitor, each revision's best chunk (ties: the earlier row).
    auto& f = found[t];
    for (size_t q = q0; q < q1; q++) {
      auto& c = cand[q - q0];
      std::sort(c.begin(), c.end(), [&](const Cand& x, const Cand& y) {
        uint64_t ox = b.ord[x.row], oy = b.ord[y.row];
        return ox != oy ? ox < oy : x.score != y.score ? x.score > y.score : x.row < y.row;
      });
      for (size_t i = 0; i < c.size(); i++)
        if (i == 0 || b.ord[c[i].row] != b.ord[c[i - 1].row]) f.push_back({(uint32_t)q, b.ord[c[i].row], b.label[c[i].row], c[i].score});
    }
    rescored[t] = tried;
  });
  size_t total = 0;
  for (auto& f : found) total += f.size();
  out.matches.reserve(total);
  for (size_t t = 0; t < tasks.size(); t++) {
    out.matches.insert(out.matches.end(), found[t].begin(), found[t].end());
    out.rescored += rescored[t];
  }
  return out;
}

// The batch in passes of `pass_rows` rows, merged.
static MonitorResult score_batch(const MonitorSet& s, const Batch& b, Pool& pool, size_t pass_rows) {
  pass_rows = std::max<size_t>(4, (pass_rows + 3) / 4 * 4);
  if (b.n <= pass_rows) return score_pass(s, b, 0, b.np, pool);
  MonitorResult out;
  for (size_t at = 0; at < b.np; at += pass_rows) {
    MonitorResult r = score_pass(s, b, at, std::min(b.np, at + pass_rows), pool);
    out.matches.insert(out.matches.end(), r.matches.begin(), r.matches.end());
    out.rescored += r.rescored;
  }
  // A revision whose chunks fell in several passes: its best chunk (ties: the earlier pass, so
  // the earlier row, as within a pass).
  std::stable_sort(out.matches.begin(), out.matches.end(), [](const MonitorMatch& a, const MonitorMatch& b) {
    return a.monitor != b.monitor ? a.monitor < b.monitor : a.ord != b.ord ? a.ord < b.ord : a.score > b.score;
  });
  size_t w = 0;
  for (size_t i = 0; i < out.matches.size(); i++)
    if (w == 0 || out.matches[i].monitor != out.matches[w - 1].monitor || out.matches[i].ord != out.matches[w - 1].ord) out.matches[w++] = out.matches[i];
  out.matches.resize(w);
  return out;
}

MonitorResult score_monitors(const MonitorSet& s, const ChunkBatch& in, Pool& pool, size_t pass_rows) {
  if (s.m == 0 || in.n == 0) return {};
  Batch b = prepare_batch(in.vec, in.n, true, pool);
  b.ord = in.ord, b.label = in.label;
  return score_batch(s, b, pool, pass_rows);
}

MonitorResult score_monitor_labels(const MonitorSet& s, const Engine& e, uint64_t from, uint64_t to, Pool& pool, size_t pass_rows) {
  if (s.m == 0 || to <= from) return {};
  return score_batch(s, gather_batch(e, from, to), pool, pass_rows);
}

int64_t monitor_dots(const MonitorSet& s, const float* vec, size_t n, Pool& pool, size_t pass_rows) {
  if (s.m == 0 || n == 0) return 0;
  pass_rows = std::max<size_t>(4, (pass_rows + 3) / 4 * 4);
  const Kernels& K = kernels();
  Batch b = prepare_batch(vec, n, false, pool);
  std::vector<Group> gs = groups_for(s, b.nmax);
  auto tasks = tasks_for(gs.size(), pool.width());
  int64_t total = 0;
  for (size_t at = 0; at < b.np; at += pass_rows) {
    std::vector<int64_t> sums(tasks.size(), 0);
    pool.run(tasks.size(), [&](size_t t) {
      int64_t sum = 0;
      tiles(K, b, at, std::min(b.np, at + pass_rows), gs.data(), tasks[t].first, tasks[t].second, [&](size_t, const Group&, const int32_t* dots, bool one) {
        for (size_t i = 0; i < (one ? 4u : 16u); i++) sum += dots[i];
      });
      sums[t] = sum;
    });
    for (int64_t x : sums) total += x;
  }
  return total;
}

}  // namespace nm
