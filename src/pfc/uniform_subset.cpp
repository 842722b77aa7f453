#include "pfc/uniform_subset.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "core/counter_rng.h"
#include "core/error.h"

namespace pfc {
namespace {

// Candidates per thread below which one thread does the whole pass.
constexpr std::int64_t kCandidatesPerThread = std::int64_t{1} << 20;
constexpr int kMaxThreads = 8;

// The candidates c in [begin, end) whose 53-bit uniform (key, c) is below `threshold`, in order.
// Blocks of candidates go through a small buffer, every candidate written and only the kept
// ones counted: no branch to mispredict, and no buffer the size of the range.
void keep_below(std::uint64_t key, std::uint64_t threshold, std::int64_t begin, std::int64_t end,
                std::vector<std::int64_t>& kept) {
  constexpr std::int64_t kBlock = 4096;
  std::int64_t block[kBlock];
  const double p = std::ldexp(static_cast<double>(threshold), -53);
  kept.reserve(static_cast<std::size_t>(1.01 * p * static_cast<double>(end - begin)) + kBlock);
  for (std::int64_t b = begin; b < end; b += kBlock) {
    const std::int64_t e = std::min(end, b + kBlock);
    std::int64_t m = 0;
    for (std::int64_t c = b; c < e; ++c) {
      block[m] = c;
      m += (splitmix64(key + static_cast<std::uint64_t>(c)) >> 11) < threshold;
    }
    kept.insert(kept.end(), block, block + m);
  }
}

// Bernoulli(threshold / 2^53) over [0, n), split across threads for large n; the result does
// not depend on the split.
std::vector<std::int64_t> bernoulli_pass(std::int64_t n, std::uint64_t threshold,
                                         std::uint64_t key) {
  const auto hardware =
      static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t threads = std::clamp<std::int64_t>(
      n / kCandidatesPerThread, 1, std::min<std::int64_t>(hardware, kMaxThreads));
  std::vector<std::vector<std::int64_t>> parts(static_cast<std::size_t>(threads));
  const std::int64_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (std::int64_t t = 1; t < threads; ++t)
    workers.emplace_back(keep_below, key, threshold, std::min(n, t * chunk),
                         std::min(n, (t + 1) * chunk), std::ref(parts[t]));
  keep_below(key, threshold, 0, std::min(n, chunk), parts[0]);
  for (std::thread& w : workers) w.join();
  std::vector<std::int64_t> kept = std::move(parts[0]);
  for (std::size_t t = 1; t < parts.size(); ++t)
    kept.insert(kept.end(), parts[t].begin(), parts[t].end());
  return kept;
}

}  // namespace

std::vector<std::int64_t> sequential_subset(std::int64_t n, std::int64_t k, std::uint64_t key) {
  PFC_CHECK(n >= 0 && k >= 0 && k <= n, "sequential_subset: cannot draw {} of {}", k, n);
  std::vector<std::int64_t> kept;
  kept.reserve(static_cast<std::size_t>(k));
  std::int64_t needed = k;
  for (std::int64_t c = 0; c < n && needed > 0; ++c) {
    if (uniform53(key, static_cast<std::uint64_t>(c)) * static_cast<double>(n - c) <
        static_cast<double>(needed)) {
      kept.push_back(c);
      --needed;
    }
  }
  return kept;
}

std::vector<std::int64_t> uniform_subset(std::int64_t n, std::int64_t k, std::uint64_t key) {
  PFC_CHECK(n >= 0 && k >= 0 && k <= n, "uniform_subset: cannot draw {} of {}", k, n);
  if (k == n) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  // Six standard deviations (and 10) above k: the pass falls short about once in 1e9 draws.
  const double margin = 6.0 * std::sqrt(static_cast<double>(k)) + 10.0;
  const double p = std::min(1.0, (static_cast<double>(k) + margin) / static_cast<double>(n));
  const auto threshold = static_cast<std::uint64_t>(std::ldexp(p, 53));
  std::vector<std::int64_t> kept = bernoulli_pass(n, threshold, key);
  const auto m = static_cast<std::int64_t>(kept.size());
  if (m < k) return sequential_subset(n, k, key);

  // Drop m - k of the kept, every choice equally likely: a partial Fisher-Yates shuffle of
  // their positions, from a stream of its own.
  const std::uint64_t trim_key = splitmix64(key ^ fnv1a64("uniform_subset.trim"));
  const std::int64_t drop = m - k;
  std::vector<std::int64_t> position(static_cast<std::size_t>(m));
  std::iota(position.begin(), position.end(), 0);
  std::vector<char> dropped(static_cast<std::size_t>(m), 0);
  for (std::int64_t i = 0; i < drop; ++i) {
    const double u = uniform53(trim_key, static_cast<std::uint64_t>(i));
    const auto j = i + static_cast<std::int64_t>(u * static_cast<double>(m - i));
    std::swap(position[i], position[j]);
    dropped[position[i]] = 1;
  }
  std::vector<std::int64_t> subset;
  subset.reserve(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < m; ++i)
    if (!dropped[i]) subset.push_back(kept[i]);
  return subset;
}

}  // namespace pfc
