#include "comm/mpi_check.h"

#include <fmt/format.h>

#include <cstring>
#include <string_view>

#include "core/error.h"

namespace pfc {

void throw_mpi_error(const char* file, int line, const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  // The call's name, without its argument list.
  std::string_view name(call);
  name = name.substr(0, name.find('('));
  const char* base = std::strrchr(file, '/');
  throw Error(fmt::format("{} failed: {} (MPI error {}; {}:{})", name,
                          length > 0 ? std::string_view(text, length) : "unknown error", code,
                          base ? base + 1 : file, line));
}

}  // namespace pfc
