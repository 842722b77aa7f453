// The PartialFC method names of the config and the command line.
#include <gtest/gtest.h>

#include "core/error.h"
#include "pfc/pfc_method.h"

namespace pfc {
namespace {

TEST(PfcMethod, ParsesTheThreeNamesAndRoundTrips) {
  for (PfcMethod m : {PfcMethod::dp, PfcMethod::mp, PfcMethod::pfc})
    EXPECT_EQ(parse_pfc_method(pfc_method_name(m)), m);
}

TEST(PfcMethod, RejectsOtherNamesWithTheChoices) {
  try {
    parse_pfc_method("PFC");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("\"PFC\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dp, mp or pfc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pfc
