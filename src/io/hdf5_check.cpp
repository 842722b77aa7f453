#include "io/hdf5_check.h"

#include <fmt/format.h>

#include <vector>

#include "core/error.h"

namespace pfc::h5 {

namespace {

struct StackEntries {
  std::vector<std::string> descriptions;  // outermost (the API call) first
};

herr_t collect(unsigned, const H5E_error2_t* entry, void* data) {
  if (entry->desc) static_cast<StackEntries*>(data)->descriptions.emplace_back(entry->desc);
  return 0;
}

// HDF5 reports a failed system call as "... errno = 28, error message = 'No space left on
// device', ..."; the quoted text is the part a user can act on.
std::string errno_text(const std::string& description) {
  constexpr std::string_view marker = "error message = '";
  const std::size_t begin = description.find(marker);
  if (begin == std::string::npos) return {};
  const std::size_t text = begin + marker.size();
  const std::size_t end = description.find('\'', text);
  return description.substr(text, end == std::string::npos ? std::string::npos : end - text);
}

}  // namespace

std::string take_error_reason() {
  const hid_t stack = H5Eget_current_stack();
  if (stack < 0) return {};
  StackEntries entries;
  H5Ewalk2(stack, H5E_WALK_DOWNWARD, collect, &entries);
  H5Eclose_stack(stack);
  for (const std::string& description : entries.descriptions)
    if (const std::string text = errno_text(description); !text.empty()) return text;
  return entries.descriptions.empty() ? std::string() : entries.descriptions.back();
}

std::string object_name(hid_t loc) {
  char object[1024] = {};
  H5Iget_name(loc, object, sizeof object);
  char file[1024] = {};
  H5Fget_name(loc, file, sizeof file);
  return fmt::format("{}:{}", file, object);
}

void throw_hdf5_error(hid_t loc, const std::string& what) {
  const std::string reason = take_error_reason();  // before object_name's own HDF5 calls
  throw Error(fmt::format("HDF5: cannot {} (in {}){}{}", what, object_name(loc),
                          reason.empty() ? "" : ": ", reason));
}

hid_t checked(hid_t id, hid_t loc, const std::string& what) {
  if (id < 0) throw_hdf5_error(loc, what);
  return id;
}

void checked_status(herr_t status, hid_t loc, const std::string& what) {
  if (status < 0) throw_hdf5_error(loc, what);
}

}  // namespace pfc::h5
