// Damage done to HDF5 files on purpose, as a failing disk or a stray write would: one byte of a
// dataset's stored data flipped in place, behind HDF5's back (so its checksum no longer fits).
#pragma once

#include <cstdint>
#include <string>

namespace pfc::test {

// Flips one bit of byte `byte` of the first chunk of `dataset` in the HDF5 file `path`.
void flip_stored_byte(const std::string& path, const std::string& dataset, std::uint64_t byte);

}  // namespace pfc::test
