#include "io/hdf5.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "io/hdf5_check.h"

namespace pfc::h5 {

namespace {

// A chunk of about this many bytes: small enough that reading a few rows (a shard's share of
// a virtual dataset) reads little more, large enough that the per-chunk overhead (index entry,
// checksum) stays negligible.
constexpr hsize_t kChunkBytes = hsize_t{1} << 20;
// HDF5's limit on one chunk.
constexpr hsize_t kMaxChunkBytes = (hsize_t{1} << 32) - 1;

Handle link_creation_with_parents() {
  Handle plist(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(plist.get(), 1);
  return plist;
}

Handle open_attribute(hid_t loc, const std::string& object, const std::string& name) {
  return Handle(checked(H5Aopen_by_name(loc, object.c_str(), name.c_str(), H5P_DEFAULT,
                                        H5P_DEFAULT),
                        loc, fmt::format("read attribute '{}' of '{}'", name, object)));
}

// Writes an attribute: into the existing one when it has the same type and shape (in place,
// which a file in SWMR mode allows), else into a new one replacing it. The attribute is opened
// through its object's own handle: HDF5 1.10 cannot write one opened by path once its object
// is closed ("can't locate open attribute").
void write_attribute_data(hid_t loc, const std::string& object, const std::string& name,
                          hid_t type, hid_t space, const void* data) {
  const std::string what = fmt::format("write attribute '{}' of '{}'", name, object);
  Handle owner(checked(H5Oopen(loc, object.c_str(), H5P_DEFAULT), loc, what));
  Handle attr;
  if (H5Aexists(owner.get(), name.c_str()) > 0) {
    attr = Handle(H5Aopen(owner.get(), name.c_str(), H5P_DEFAULT));
    if (attr.valid()) {
      Handle existing_type(H5Aget_type(attr.get()));
      Handle existing_space(H5Aget_space(attr.get()));
      if (H5Tequal(existing_type.get(), type) <= 0 ||
          H5Sextent_equal(existing_space.get(), space) <= 0)
        attr.reset();
    }
    if (!attr.valid()) H5Adelete(owner.get(), name.c_str());
  }
  if (!attr.valid())
    attr = Handle(checked(H5Acreate2(owner.get(), name.c_str(), type, space, H5P_DEFAULT,
                                     H5P_DEFAULT),
                          loc, what));
  checked_status(H5Awrite(attr.get(), type, data), loc, what);
}

}  // namespace

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

hid_t Handle::release() {
  const hid_t id = id_;
  id_ = H5I_INVALID_HID;
  return id;
}

void Handle::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: H5Oclose(id_); break;
  }
  id_ = H5I_INVALID_HID;
}

void quiet_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {

// Why a file could not be opened or created, in words: HDF5's reason (the system's errno text
// for a missing folder, a permission or a read-only file system; "file signature not found" for
// a file that is not HDF5), or what the file system says when HDF5 kept none.
std::string open_failure(const std::string& path, bool creating, bool writing,
                         std::string reason) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!creating && !fs::exists(path, ec)) return "it does not exist";
  if (reason.find("signature") != std::string::npos)
    return fmt::format("it is not an HDF5 file, or its start is damaged ({})", reason);
  if (reason.empty()) {
    const std::string target = creating ? fs::path(path).parent_path().string() : path;
    if (::access(target.empty() ? "." : target.c_str(), writing ? W_OK : R_OK) != 0)
      reason = std::strerror(errno);
  }
  return reason.empty() ? "HDF5 gives no reason" : reason;
}

// New files use the object-header and superblock formats of HDF5 1.8 and later, whose
// metadata carries checksums: a damaged attribute or group fails to load instead of being
// read as something else. (Readable by HDF5 1.10 and later, which virtual datasets need.)
// No advisory lock (see Mode): files pfc creates whole are temporaries that io/staged_file.h
// locks itself, or checkpoint files only their own rank writes.
Handle creation_access() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  H5Pset_file_locking(fapl.get(), false, true);
  return fapl;
}

// File access for the live modes: the latest format and no advisory lock (see Mode).
Handle live_file_access(bool clear_stale_write_mark) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  H5Pset_file_locking(fapl.get(), false, true);
  if (clear_stale_write_mark) {
    // What h5clear -s does: the mark of a writer that died stays in the superblock.
    hbool_t clear = true;
    H5Pset(fapl.get(), "clear_status_flags", &clear);
  }
  return fapl;
}

}  // namespace

File::File(const std::string& path, Mode mode) : path_(path) {
  quiet_errors();
  hid_t id = H5I_INVALID_HID;
  switch (mode) {
    case Mode::read: id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT); break;
    case Mode::read_write: id = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT); break;
    case Mode::create_truncate: {
      const Handle fapl = creation_access();
      id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
      break;
    }
    case Mode::live_create:
      id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, live_file_access(false).get());
      break;
    case Mode::live_read_write:
      id = H5Fopen(path.c_str(), H5F_ACC_RDWR, live_file_access(false).get());
      if (id < 0) {
        take_error_reason();  // the first try's; the second one's is the one to report
        id = H5Fopen(path.c_str(), H5F_ACC_RDWR, live_file_access(true).get());
        cleared_stale_write_mark_ = id >= 0;
      }
      break;
    case Mode::live_read:
      id = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ,
                   live_file_access(false).get());
      break;
  }
  if (id < 0) {
    const bool creating = mode == Mode::create_truncate || mode == Mode::live_create;
    const bool writing = creating || mode == Mode::read_write || mode == Mode::live_read_write;
    throw Error(fmt::format("cannot {} HDF5 file '{}'{}: {}", creating ? "create" : "open", path,
                            writing && !creating ? " for writing" : "",
                            open_failure(path, creating, writing, take_error_reason())));
  }
  handle_ = Handle(id);
}

bool File::start_swmr_write() { return H5Fstart_swmr_write(id()) >= 0; }

void File::flush() {
  checked_status(H5Fflush(id(), H5F_SCOPE_LOCAL), id(), "flush the file to disk");
}

void File::close() {
  if (!handle_.valid()) return;
  const hid_t id = handle_.release();
  if (H5Fclose(id) < 0)
    throw Error(fmt::format("HDF5: cannot finish writing '{}': {}", path_,
                            take_error_reason()));
}

bool exists(hid_t loc, const std::string& path) {
  quiet_errors();
  // Walk the path so that a missing parent answers false instead of failing.
  std::size_t pos = path.front() == '/' ? 1 : 0;
  while (true) {
    const std::size_t slash = path.find('/', pos);
    const std::string prefix = path.substr(0, slash);
    if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) return true;
    pos = slash + 1;
  }
}

std::vector<std::string> children(hid_t loc, const std::string& group_path) {
  Handle group(checked(H5Gopen2(loc, group_path.c_str(), H5P_DEFAULT), loc,
                       fmt::format("open group '{}'", group_path)));
  std::vector<std::string> names;
  H5Literate(group.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
             [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
               static_cast<std::vector<std::string>*>(out)->emplace_back(name);
               return 0;
             },
             &names);
  return names;
}

Shape dataset_shape(hid_t loc, const std::string& path) {
  Handle dataset(checked(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), loc,
                         fmt::format("open dataset '{}'", path)));
  Handle space(H5Dget_space(dataset.get()));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return Shape(dims.begin(), dims.end());
}

Handle require_group(hid_t loc, const std::string& path) {
  if (exists(loc, path))
    return Handle(checked(H5Gopen2(loc, path.c_str(), H5P_DEFAULT), loc,
                          fmt::format("open group '{}'", path)));
  Handle plist = link_creation_with_parents();
  return Handle(checked(H5Gcreate2(loc, path.c_str(), plist.get(), H5P_DEFAULT, H5P_DEFAULT),
                        loc, fmt::format("create group '{}'", path)));
}

hid_t native_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return H5T_NATIVE_FLOAT;
    case DType::f64: return H5T_NATIVE_DOUBLE;
    case DType::i32: return H5T_NATIVE_INT32;
    case DType::i64: return H5T_NATIVE_INT64;
    case DType::u8: return H5T_NATIVE_UINT8;
    case DType::f16: return H5T_NATIVE_UINT16;  // stored as raw binary16 bits
  }
  throw Error("HDF5: no native type for this dtype");
}

Tensor read_tensor(hid_t loc, const std::string& path, DType as) {
  Handle dataset(checked(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), loc,
                         fmt::format("open dataset '{}'", path)));
  Tensor t = Tensor::host(dataset_shape(loc, path), as);
  if (t.numel() == 0) return t;
  checked_status(H5Dread(dataset.get(), native_type(as), H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()),
                 loc, fmt::format("read dataset '{}' as {}", path, dtype_name(as)));
  return t;
}

namespace {

// Chunked storage with HDF5's Fletcher32 checksum, so that a damaged byte is a read error
// naming the dataset. Chunks hold whole rows (the leading dimension is split). A scalar or
// empty tensor has no chunks, and so no checksum.
Handle checksummed_creation(const Tensor& host, const std::vector<hsize_t>& dims,
                            const std::string& path) {
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (dims.empty() || host.numel() == 0) return dcpl;
  const hsize_t row_bytes = static_cast<hsize_t>(host.bytes()) / dims[0];
  PFC_CHECK(row_bytes <= kMaxChunkBytes, "write_tensor('{}'): one row of {} ({} bytes) exceeds "
            "HDF5's largest chunk", path, host.describe(), row_bytes);
  std::vector<hsize_t> chunk = dims;
  chunk[0] = std::clamp<hsize_t>(kChunkBytes / row_bytes, 1, dims[0]);
  H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
  H5Pset_fletcher32(dcpl.get());
  return dcpl;
}

}  // namespace

void write_tensor(hid_t loc, const std::string& path, const Tensor& host) {
  PFC_CHECK(host.device() == DeviceKind::cpu, "write_tensor('{}') needs a host tensor", path);
  std::vector<hsize_t> dims(host.shape().begin(), host.shape().end());
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Handle plist = link_creation_with_parents();
  Handle dcpl = checksummed_creation(host, dims, path);
  Handle dataset(checked(H5Dcreate2(loc, path.c_str(), native_type(host.dtype()), space.get(),
                                    plist.get(), dcpl.get(), H5P_DEFAULT),
                         loc, fmt::format("create dataset '{}'", path)));
  if (host.numel() == 0) return;
  checked_status(H5Dwrite(dataset.get(), native_type(host.dtype()), H5S_ALL, H5S_ALL,
                          H5P_DEFAULT, host.raw()),
                 loc, fmt::format("write dataset '{}'", path));
}

void write_strings(hid_t loc, const std::string& path, const std::vector<std::string>& values) {
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr));
  Handle plist = link_creation_with_parents();
  Handle dataset(checked(H5Dcreate2(loc, path.c_str(), type.get(), space.get(), plist.get(),
                                    H5P_DEFAULT, H5P_DEFAULT),
                         loc, fmt::format("create dataset '{}'", path)));
  if (values.empty()) return;
  std::vector<const char*> text;
  for (const std::string& v : values) text.push_back(v.c_str());
  checked_status(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()),
                 loc, fmt::format("write dataset '{}'", path));
}

bool has_checksum(hid_t loc, const std::string& path) {
  Handle dataset(checked(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), loc,
                         fmt::format("open dataset '{}'", path)));
  Handle dcpl(H5Dget_create_plist(dataset.get()));
  const int filters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    std::size_t count = 0;
    if (H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &count, nullptr, 0,
                       nullptr, nullptr) == H5Z_FILTER_FLETCHER32)
      return true;
  }
  return false;
}

bool has_attribute(hid_t loc, const std::string& object, const std::string& name) {
  return H5Aexists_by_name(loc, object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

double read_attribute_double(hid_t loc, const std::string& object, const std::string& name) {
  Handle attr = open_attribute(loc, object, name);
  double value = 0;
  checked_status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value), loc,
                 fmt::format("read attribute '{}' of '{}' as a number", name, object));
  return value;
}

std::int64_t read_attribute_int(hid_t loc, const std::string& object, const std::string& name) {
  Handle attr = open_attribute(loc, object, name);
  std::int64_t value = 0;
  checked_status(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), loc,
                 fmt::format("read attribute '{}' of '{}' as an integer", name, object));
  return value;
}

std::vector<std::int64_t> read_attribute_ints(hid_t loc, const std::string& object,
                                              const std::string& name) {
  Handle attr = open_attribute(loc, object, name);
  Handle space(H5Aget_space(attr.get()));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<std::int64_t> values(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
  checked_status(H5Aread(attr.get(), H5T_NATIVE_INT64, values.data()), loc,
                 fmt::format("read attribute '{}' of '{}' as integers", name, object));
  return values;
}

std::string read_attribute_string(hid_t loc, const std::string& object, const std::string& name) {
  Handle attr = open_attribute(loc, object, name);
  Handle type(H5Aget_type(attr.get()));
  PFC_CHECK(H5Tget_class(type.get()) == H5T_STRING, "attribute '{}' of '{}' is not a string",
            name, object);
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle memtype(H5Tcopy(H5T_C_S1));
    H5Tset_size(memtype.get(), H5T_VARIABLE);
    H5Tset_cset(memtype.get(), H5Tget_cset(type.get()));  // HDF5 cannot convert ASCII <-> UTF-8
    char* text = nullptr;
    checked_status(H5Aread(attr.get(), memtype.get(), &text), loc,
                   fmt::format("read attribute '{}' of '{}'", name, object));
    std::string value = text ? text : "";
    Handle space(H5Aget_space(attr.get()));
    H5Dvlen_reclaim(memtype.get(), space.get(), H5P_DEFAULT, &text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  checked_status(H5Aread(attr.get(), type.get(), value.data()), loc,
                 fmt::format("read attribute '{}' of '{}'", name, object));
  value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
  return value;
}

void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     double value) {
  Handle space(H5Screate(H5S_SCALAR));
  write_attribute_data(loc, object, name, H5T_NATIVE_DOUBLE, space.get(), &value);
}

void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     std::int64_t value) {
  Handle space(H5Screate(H5S_SCALAR));
  write_attribute_data(loc, object, name, H5T_NATIVE_INT64, space.get(), &value);
}

void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     const std::vector<std::int64_t>& values) {
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr));
  write_attribute_data(loc, object, name, H5T_NATIVE_INT64, space.get(), values.data());
}

void write_attribute(hid_t loc, const std::string& object, const std::string& name,
                     const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR));
  const char* text = value.c_str();
  write_attribute_data(loc, object, name, type.get(), space.get(), &text);
}

}  // namespace pfc::h5
