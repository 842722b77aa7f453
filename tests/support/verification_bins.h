// Verification files for tests: pickles of (images, issame_list) written byte for byte as
// Python 2's pickle protocol 2 writes them (SHORT_BINSTRING/BINSTRING images, BINPUT memo,
// MARK ... APPENDS in batches of 1000), and face JPEGs to fill them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pfc::test {

using Bytes = std::vector<std::uint8_t>;

// The pickle of the tuple (images, issame) as Python 2's cPickle.dump(..., protocol=2).
Bytes python2_pickle(const std::vector<Bytes>& images, const std::vector<bool>& issame);

// `pairs` pairs of 112x112 face JPEGs: pair p is two variants of one identity when issame
// (every other pair), of two identities otherwise.
struct FacePairs {
  std::vector<Bytes> images;
  std::vector<bool> issame;
};
FacePairs face_pairs(int pairs, int size = 112);

// Writes python2_pickle(pairs) to `path`.
void write_verification_bin(const std::string& path, const FacePairs& pairs);

}  // namespace pfc::test
