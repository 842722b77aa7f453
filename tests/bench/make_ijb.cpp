// pfc_make_ijb ROOT TARGET IDENTITIES [--first F] [--templates T] [--size S]
//              [--impostors K] [--photos DIR]
// writes a synthetic IJB-B/C data set in the layout of eval_ijbc.py (TARGET ijbb or ijbc):
//   ROOT/loose_crop/N.jpg      photos of identities F .. F + IDENTITIES - 1 (support/
//                              face_images.h), each placed into a larger canvas by a random
//                              similarity (rotation +-25 degrees, scale 0.7-1.6, anywhere in a
//                              canvas 1.2-2.2 times the photo), its landmarks moved the same way
//   ROOT/meta/t_face_tid_mid.txt, t_name_5pts_score.txt (faceness 0.3-1.0),
//   ROOT/meta/t_template_pair_label.txt
// Each identity has T templates (ids neither consecutive nor sorted by identity) of 1-3 medias
// of 1-2 frames; the pairs are every two templates of one identity (genuine) and K templates
// of other identities for each template (impostors), shuffled. S is the size of the aligned
// photos (the network's image size). With --photos, DIR gets the same images as raw photos
// for `pfc pack DIR OUT --landmarks DIR/landmarks.txt`: DIR/id_NNNNN/NAME and the lines
// `id_NNNNN/NAME x1 y1 ... x5 y5`. Deterministic.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/counter_rng.h"
#include "support/face_images.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string root, target;
  int identities = 0, first = 0, templates = 3, size = 112, impostors = 6;
  std::string photos;
};

class Draws {
 public:
  explicit Draws(const char* purpose, int a = 0) : key_(pfc::stream_key(a, purpose, 0)) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * pfc::uniform53(key_, next_++); }
  int below(int n) { return std::min(n - 1, static_cast<int>(uniform(0, n))); }

 private:
  std::uint64_t key_;
  std::uint64_t next_ = 0;
};

int make(const Options& o) {
  const fs::path root(o.root);
  fs::create_directories(root / "meta");
  fs::create_directories(root / "loose_crop");
  const std::string t = o.target;
  std::ofstream tid_mid(root / "meta" / (t + "_face_tid_mid.txt"));
  std::ofstream points(root / "meta" / (t + "_name_5pts_score.txt"));
  std::ofstream pairs_file(root / "meta" / (t + "_template_pair_label.txt"));
  std::ofstream list;
  if (!o.photos.empty()) {
    fs::create_directories(o.photos);
    list.open(fs::path(o.photos) / "landmarks.txt");
  }

  Draws d("ijb_layout", o.first);
  int image = 0, media = 0;
  std::vector<std::vector<int>> templates_of(static_cast<std::size_t>(o.identities));
  for (int i = 0; i < o.identities; ++i) {
    const int identity = o.first + i;
    int variant = 0;
    for (int j = 0; j < o.templates; ++j) {
      // Ids in another order than the identities: the pooling must not depend on it.
      const int template_id = 100 + 7 * (o.identities * o.templates - (j * o.identities + i));
      templates_of[static_cast<std::size_t>(i)].push_back(template_id);
      const int medias = 1 + d.below(3);
      for (int m = 0; m < medias; ++m, ++media) {
        const int frames = 1 + d.below(2);
        for (int f = 0; f < frames; ++f, ++variant) {
          const std::string name = fmt::format("{}.jpg", ++image);
          const double s = o.size;
          const int width = static_cast<int>(s * d.uniform(1.2, 2.2));
          const int height = static_cast<int>(s * d.uniform(1.2, 2.2));
          const double angle = d.uniform(-25, 25) * M_PI / 180, scale = d.uniform(0.7, 1.6);
          pfc::test::PhotoPlacement place{scale * std::cos(angle), scale * std::sin(angle), 0, 0};
          // The photo's centre goes to a random point of the canvas.
          const double px = s / 2, py = s / 2;
          const double to_x = width * d.uniform(0.3, 0.7), to_y = height * d.uniform(0.3, 0.7);
          place.tx = to_x - (place.a * px - place.b * py);
          place.ty = to_y - (place.b * px + place.a * py);
          const pfc::test::LooseCrop crop =
              pfc::test::face_loose_crop(identity, variant, o.size, width, height, place);
          pfc::test::write_file((root / "loose_crop" / name).string(), crop.jpeg);
          std::string lm;
          for (const double v : crop.landmarks) lm += fmt::format(" {:.4f}", v);
          tid_mid << name << ' ' << template_id << ' ' << 90000 + media << '\n';
          points << name << lm << fmt::format(" {:.6f}", d.uniform(0.3, 1.0)) << '\n';
          if (!o.photos.empty()) {
            const std::string folder = fmt::format("id_{:05d}", identity);
            fs::create_directories(fs::path(o.photos) / folder);
            pfc::test::write_file((fs::path(o.photos) / folder / name).string(), crop.jpeg);
            list << folder << '/' << name << lm << '\n';
          }
        }
      }
    }
  }
  std::vector<std::string> pairs;
  for (int i = 0; i < o.identities; ++i) {
    const auto& mine = templates_of[static_cast<std::size_t>(i)];
    for (std::size_t a = 0; a < mine.size(); ++a)
      for (std::size_t b = a + 1; b < mine.size(); ++b)
        pairs.push_back(fmt::format("{} {} 1", mine[a], mine[b]));
    for (const int t1 : mine)
      for (int k = 0; k < o.impostors; ++k) {
        int other = d.below(o.identities - 1);
        if (other >= i) ++other;
        const auto& theirs = templates_of[static_cast<std::size_t>(other)];
        pairs.push_back(fmt::format("{} {} 0", t1, theirs[static_cast<std::size_t>(
                                                       d.below(static_cast<int>(theirs.size())))]));
      }
  }
  for (std::size_t k = pairs.size(); k > 1; --k)  // Fisher-Yates
    std::swap(pairs[k - 1], pairs[static_cast<std::size_t>(d.below(static_cast<int>(k)))]);
  for (const std::string& p : pairs) pairs_file << p << '\n';
  if (!tid_mid || !points || !pairs_file || (!o.photos.empty() && !list)) {
    std::fprintf(stderr, "pfc_make_ijb: cannot write under %s\n", o.root.c_str());
    return 1;
  }
  std::printf("%d images, %d templates, %zu pairs\n", image, o.identities * o.templates,
              pairs.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto value = [&] { return i + 1 < args.size() ? args[++i] : std::string("0"); };
    if (args[i] == "--first") o.first = std::stoi(value());
    else if (args[i] == "--templates") o.templates = std::stoi(value());
    else if (args[i] == "--size") o.size = std::stoi(value());
    else if (args[i] == "--impostors") o.impostors = std::stoi(value());
    else if (args[i] == "--photos") o.photos = value();
    else positional.push_back(args[i]);
  }
  if (positional.size() != 3 || (positional[1] != "ijbb" && positional[1] != "ijbc")) {
    std::fprintf(stderr,
                 "usage: %s ROOT ijbb|ijbc IDENTITIES [--first F] [--templates T] [--size S] "
                 "[--impostors K] [--photos DIR]\n",
                 argv[0]);
    return 2;
  }
  o.root = positional[0];
  o.target = positional[1];
  o.identities = std::stoi(positional[2]);
  if (o.identities < 2 || o.templates < 2) {
    std::fprintf(stderr, "pfc_make_ijb: at least 2 identities of 2 templates\n");
    return 2;
  }
  try {
    return make(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pfc_make_ijb: %s\n", e.what());
    return 1;
  }
}
