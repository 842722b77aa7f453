// A uniformly random k-subset of [0, n), sorted, as a pure function of a counter-RNG key: the
// negatives PartialFC samples each step. At r50 scale one GPU holds millions of classes, so
// the draw must cost about a nanosecond per candidate, not the five of a sequential pass.
#pragma once

#include <cstdint>
#include <vector>

namespace pfc {

// Every k-subset equally likely (0 <= k <= n). Each candidate is kept independently with a
// probability a little above k / n (branch-free, in parallel for large n), and uniformly
// chosen extras are then dropped. Keeping i.i.d. draws and dropping uniformly at random
// treats every candidate alike, so the result is uniform over k-subsets; in the rare case
// (about 1e-9) that too few were kept, sequential_subset draws instead.
std::vector<std::int64_t> uniform_subset(std::int64_t n, std::int64_t k, std::uint64_t key);

// The same distribution by selection sampling (Knuth's Algorithm S): candidate c is kept with
// probability still_needed / still_available. One ordered pass; the reference for the above.
std::vector<std::int64_t> sequential_subset(std::int64_t n, std::int64_t k, std::uint64_t key);

}  // namespace pfc
