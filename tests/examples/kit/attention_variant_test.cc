// The attention variants of the experiments by name (kit/attention_variant.h).
#include "kit/attention_variant.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kAll = {"softmax",      "sparsemax",      "entmax15", "cont-softmax", "cont-sparsemax",
                                       "disc-softmax", "disc-sparsemax", "mix2",     "mix3"};

TEST(AttentionVariant, EveryNameOfTheGrammar) {
  struct Want {
    std::string name, kind;
    double alpha;
    int components;
  };
  for (const Want& w : {Want{"softmax", "discrete", 1.0, 1}, Want{"sparsemax", "discrete", 2.0, 1},
                        Want{"entmax15", "discrete", 1.5, 1}, Want{"cont-softmax", "cont", 1.0, 1},
                        Want{"cont-sparsemax", "cont", 2.0, 1}, Want{"disc-softmax", "disc+cont", 1.0, 1},
                        Want{"disc-sparsemax", "disc+cont", 2.0, 1}, Want{"mix2", "mixture", 1.0, 2},
                        Want{"mix3", "mixture", 1.0, 3}}) {
    SCOPED_TRACE(w.name);
    const kit::AttentionVariant v = kit::parse_attention_variant(w.name, kAll);
    EXPECT_EQ(v.name, w.name);
    EXPECT_EQ(v.kind, w.kind);
    EXPECT_EQ(v.alpha, w.alpha);
    EXPECT_EQ(v.components, w.components);
    EXPECT_EQ(v.continuous(), w.kind != "discrete");
  }
}

// A name outside the experiment's list is refused even when the grammar knows it (the sequence
// experiment has no mixtures), and the message names it and every known name.
TEST(AttentionVariant, UnknownNamesAreRefusedWithTheList) {
  const std::vector<std::string> sequence = {"softmax", "sparsemax", "cont-softmax"};
  for (const std::string bad : {"mix2", "entmax15", "cont-entmax", "mix1", "mix", "", "Softmax", "cont-softmax "}) {
    SCOPED_TRACE(bad);
    try {
      kit::parse_attention_variant(bad, sequence);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'" + bad + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("softmax, sparsemax, cont-softmax"), std::string::npos) << message;
    }
  }
  // In a list, a name the grammar does not know is still refused.
  EXPECT_THROW(kit::parse_attention_variant("mix1", {"mix1"}), std::invalid_argument);
}

}  // namespace
