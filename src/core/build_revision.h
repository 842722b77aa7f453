// The git revision pfc was configured from (`git describe --always --dirty`). It lives in one
// generated source file, so that a new revision recompiles that file alone rather than every
// file of the library, as a compile definition did.
#pragma once

namespace pfc {

const char* git_revision();

}  // namespace pfc
