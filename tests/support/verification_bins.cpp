#include "support/verification_bins.h"

#include <algorithm>

#include "support/face_images.h"

namespace pfc::test {

namespace {

constexpr std::uint8_t kProto = 0x80, kMark = '(', kStop = '.', kEmptyList = ']';
constexpr std::uint8_t kAppend = 'a', kAppends = 'e', kTuple2 = 0x86;
constexpr std::uint8_t kNewTrue = 0x88, kNewFalse = 0x89;
constexpr std::uint8_t kShortBinString = 'U', kBinString = 'T';
constexpr std::uint8_t kBinPut = 'q', kLongBinPut = 'r';
// Python 2's pickle writes list items in batches of this many.
constexpr std::size_t kBatch = 1000;

void put_u32(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

class Python2Writer {
 public:
  Bytes& out() { return out_; }
  // Python 2's memoize: every list, tuple and string gets the next memo key.
  void memoize() {
    if (next_ < 256) {
      out_.push_back(kBinPut);
      out_.push_back(static_cast<std::uint8_t>(next_));
    } else {
      out_.push_back(kLongBinPut);
      put_u32(out_, next_);
    }
    ++next_;
  }
  void string(const Bytes& s) {
    if (s.size() < 256) {
      out_.push_back(kShortBinString);
      out_.push_back(static_cast<std::uint8_t>(s.size()));
    } else {
      out_.push_back(kBinString);
      put_u32(out_, static_cast<std::uint32_t>(s.size()));
    }
    out_.insert(out_.end(), s.begin(), s.end());
    memoize();
  }
  // save_list: EMPTY_LIST, memoize, then the items in batches (a batch of one is APPEND).
  template <class Item, class Save>
  void list(const std::vector<Item>& items, Save save) {
    out_.push_back(kEmptyList);
    memoize();
    for (std::size_t begin = 0; begin < items.size(); begin += kBatch) {
      const std::size_t end = std::min(items.size(), begin + kBatch);
      if (end - begin == 1) {
        save(items[begin]);
        out_.push_back(kAppend);
        continue;
      }
      out_.push_back(kMark);
      for (std::size_t i = begin; i < end; ++i) save(items[i]);
      out_.push_back(kAppends);
    }
  }

 private:
  Bytes out_;
  std::uint32_t next_ = 0;
};

}  // namespace

Bytes python2_pickle(const std::vector<Bytes>& images, const std::vector<bool>& issame) {
  Python2Writer w;
  w.out() = {kProto, 2};
  w.list(images, [&](const Bytes& image) { w.string(image); });
  w.list(issame, [&](bool same) { w.out().push_back(same ? kNewTrue : kNewFalse); });
  w.out().push_back(kTuple2);
  w.memoize();
  w.out().push_back(kStop);
  return w.out();
}

FacePairs face_pairs(int pairs, int size) {
  FacePairs f;
  for (int p = 0; p < pairs; ++p) {
    const bool same = p % 2 == 0;
    const int a = p, b = same ? p : p + pairs;
    f.images.push_back(encode_jpeg(face_rgb(a, 0, size), size, size, 90));
    f.images.push_back(encode_jpeg(face_rgb(b, same ? 1 : 0, size), size, size, 90));
    f.issame.push_back(same);
  }
  return f;
}

void write_verification_bin(const std::string& path, const FacePairs& pairs) {
  write_file(path, python2_pickle(pairs.images, pairs.issame));
}

}  // namespace pfc::test
