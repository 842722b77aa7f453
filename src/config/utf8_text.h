// Text pfc records (config values, which are TOML; strings in its HDF5 files, which declare
// UTF-8) must be UTF-8: a path with bytes of another encoding (a folder named in Latin-1, byte
// 0xFF) can be neither recorded in a run's config nor read back to resume it, and an HDF5
// reader (h5py) fails on it. Such text is refused, naming where it came from, instead of being
// recorded changed (quoted, or with its bytes replaced). Paths that are only opened or created
// are bytes, and pass through as they are.
#pragma once

#include <string_view>

namespace pfc {

// Throws pfc::UsageError naming `what` ("--set output", "RUN_DIR") and showing the text with
// its bytes beyond ASCII as \xHH, followed by `why` it must be UTF-8, when it is not.
void check_utf8_text(std::string_view text, std::string_view what, std::string_view why);

// `why` for a config value.
inline constexpr std::string_view kConfigIsUtf8 =
    "config values, paths included, are TOML, which holds UTF-8 only";
// `why` for text written into an output file.
inline constexpr std::string_view kRecordedAsUtf8 =
    "the output file records it as UTF-8 text";

}  // namespace pfc
