#include "io/verification_metrics.h"

#include <fmt/format.h>

#include <span>

#include "io/hdf5.h"
#include "io/hdf5_row_datasets.h"

namespace pfc {

namespace {

constexpr const char* kGroup = "/verification";

// The f64 columns and where each lives in a row.
struct Column {
  const char* name;
  double VerificationRow::*field;
};

constexpr Column kColumns[] = {
    {"accuracy", &VerificationRow::accuracy},
    {"accuracy_std", &VerificationRow::accuracy_std},
    {"accuracy_noflip", &VerificationRow::accuracy_noflip},
    {"xnorm", &VerificationRow::xnorm},
    {"val_at_far", &VerificationRow::val_at_far},
    {"val_at_far_std", &VerificationRow::val_at_far_std},
    {"far", &VerificationRow::far},
};

std::string table(const std::string& target, const char* column) {
  return fmt::format("{}/{}/{}", kGroup, target, column);
}

}  // namespace

void create_verification_tables(hid_t file, const std::vector<std::string>& targets) {
  for (const std::string& target : targets) {
    if (h5::exists(file, table(target, "step"))) continue;
    h5::create_appendable(file, table(target, "step"), DType::i64, 0);
    for (const Column& c : kColumns) h5::create_appendable(file, table(target, c.name),
                                                            DType::f64, 0);
  }
}

void append_verification_row(hid_t file, const std::string& target, const VerificationRow& row) {
  h5::append_row(file, table(target, "step"), std::span<const std::int64_t>(&row.step, 1));
  for (const Column& c : kColumns)
    h5::append_row(file, table(target, c.name), std::span<const double>(&(row.*c.field), 1));
}

void truncate_verification_rows(hid_t file, std::int64_t step) {
  if (!h5::exists(file, kGroup)) return;
  for (const std::string& target : h5::children(file, kGroup)) {
    const std::int64_t keep = h5::rows_through_step(file, table(target, "step"), step);
    for (const std::string& column : h5::children(file, fmt::format("{}/{}", kGroup, target)))
      h5::truncate_rows(file, fmt::format("{}/{}/{}", kGroup, target, column), keep);
  }
}

std::vector<VerificationSeries> read_verification(hid_t file) {
  std::vector<VerificationSeries> all;
  if (!h5::exists(file, kGroup)) return all;
  for (const std::string& target : h5::children(file, kGroup)) {
    VerificationSeries series;
    series.name = target;
    const Tensor steps = h5::read_tensor(file, table(target, "step"), DType::i64);
    series.rows.resize(static_cast<std::size_t>(steps.numel()));
    for (std::size_t i = 0; i < series.rows.size(); ++i)
      series.rows[i].step = steps.data<std::int64_t>()[i];
    for (const Column& c : kColumns) {
      const Tensor values = h5::read_tensor(file, table(target, c.name), DType::f64);
      PFC_CHECK(values.numel() == steps.numel(), "{} has {} rows but {} has {}",
                table(target, c.name), values.numel(), table(target, "step"), steps.numel());
      for (std::size_t i = 0; i < series.rows.size(); ++i)
        series.rows[i].*c.field = values.data<double>()[i];
    }
    all.push_back(std::move(series));
  }
  return all;
}

}  // namespace pfc
