// The grapheme-to-phoneme model (issue 14) on a tiny dictionary written here: every attention
// variant learns it (the loss falls, training words decode right), beam search of width 1 is
// greedy decoding, padding in a batch changes no output, the attention recorded while decoding
// is the attention of the output fed back, a resumed run equals an uninterrupted one, and a
// trained run predicts a word the dictionary lacks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "damaged_files.h"
#include "decode.h"
#include "experiment.h"
#include "metrics.h"
#include "test_files.h"
#include "trainer.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Sixteen short words with regular spellings (CMUdict's pronunciations), two of them with an
// alternate.
constexpr const char* kFixture =
    "BAT  B AE1 T\n"
    "CAT  K AE1 T\n"
    "HAT  HH AE1 T\n"
    "MAT  M AE1 T\n"
    "TAB  T AE1 B\n"
    "CAB  K AE1 B\n"
    "BIT  B IH1 T\n"
    "HIT  HH IH1 T\n"
    "SIT  S IH1 T\n"
    "TIM  T IH1 M\n"
    "MIST  M IH1 S T\n"
    "BASS  B AE1 S\n"
    "SAM  S AE1 M\n"
    "HIS  HH IH1 Z\n"
    "THIS  DH IH1 S\n"
    "THAT  DH AE1 T\n"
    "THAT(1)  DH AH0 T\n"
    "MASS  M AE1 S\n";

g2p::Dataset fixture() {
  std::istringstream in(kFixture);
  g2p::DataOptions options;
  options.split.dev_fraction = 0.125;
  options.split.test_fraction = 0.125;
  return g2p::prepare_data(g2p::parse_dictionary(in, "fixture"), options);
}

g2p::TrainOptions tiny(const std::string& variant) {
  g2p::TrainOptions o;
  o.variant = variant;
  o.embedding = 16;
  o.hidden = 24;
  o.basis = 16;
  o.batch_size = 7;
  o.learning_rate = 1e-2;
  o.progress = false;
  return o;
}

std::vector<const std::vector<int>*> letters(const g2p::Dataset& data, const std::vector<std::size_t>& indices) {
  std::vector<const std::vector<int>*> words;
  for (auto i : indices) words.push_back(&data.encoded[i].letters);
  return words;
}

class G2pVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(G2pVariant, LearnsTheFixtureAndDecodesTrainingWordsRight) {
  const g2p::Dataset data = fixture();
  g2p::Seq2Seq model = g2p::seeded_model(static_cast<std::int64_t>(data.letters.size()),
                                         static_cast<std::int64_t>(data.phonemes.size()), tiny(GetParam()));
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
  const double first = g2p::pair_loss(model, data, data.train_pairs).item<double>();
  double last = first;
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    const at::Tensor loss = g2p::pair_loss(model, data, data.train_pairs);
    loss.backward();
    adam.step();
    last = loss.item<double>();
  }
  EXPECT_GT(first, 2.5) << GetParam();
  EXPECT_LT(last, 0.1) << GetParam() << ": the loss fell from " << first << " to " << last;
  // Greedy decoding of the training words: right (equal to one of the references) for at least
  // all but one of them.
  const auto outputs = g2p::greedy_decode(model, letters(data, data.split.train));
  std::size_t right = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k)
    right += g2p::score_word(g2p::decode_phonemes(data.phonemes, outputs[k]),
                             data.entries[data.split.train[k]].pronunciations)
                 .correct;
  EXPECT_GE(right + 1, outputs.size()) << GetParam() << ": " << right << " of " << outputs.size() << " right";
}

// A model trained a little (so that outputs vary and are of several lengths), shared by the
// decoding tests below.
g2p::Seq2Seq trained(const g2p::Dataset& data, const std::string& variant, int steps = 40) {
  g2p::Seq2Seq model = g2p::seeded_model(static_cast<std::int64_t>(data.letters.size()),
                                         static_cast<std::int64_t>(data.phonemes.size()), tiny(variant));
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-2));
  for (int step = 0; step < steps; ++step) {
    adam.zero_grad();
    g2p::pair_loss(model, data, data.train_pairs).backward();
    adam.step();
  }
  return model;
}

std::vector<std::size_t> every_word(const g2p::Dataset& data) {
  std::vector<std::size_t> all(data.entries.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

TEST_P(G2pVariant, BeamOfOneIsGreedyAndWiderBeamsEndWithinTheLimit) {
  const g2p::Dataset data = fixture();
  for (int steps : {0, 40}) {  // an untrained model runs to the length limit; a trained one stops
    g2p::Seq2Seq model = trained(data, GetParam(), steps);
    const auto words = letters(data, every_word(data));
    const auto greedy = g2p::greedy_decode(model, words, 5);
    EXPECT_EQ(g2p::beam_decode(model, words, 1, 3), greedy) << GetParam() << " after " << steps << " steps";
    for (std::size_t beam : {2, 5}) {
      const auto wide = g2p::beam_decode(model, words, beam, 4);
      ASSERT_EQ(wide.size(), words.size());
      for (std::size_t k = 0; k < wide.size(); ++k) {
        EXPECT_LE(wide[k].size(), g2p::max_output_length(words[k]->size()));
        for (int id : wide[k]) EXPECT_GT(id, g2p::kPhonemeEnd);  // no specials in an output
      }
    }
  }
}

TEST_P(G2pVariant, PaddingChangesNoOutputAndDecodingRecordsTheFedBackAttention) {
  const g2p::Dataset data = fixture();
  g2p::Seq2Seq model = trained(data, GetParam());
  const auto words = letters(data, every_word(data));
  // Each word alone (no padding) and in one batch with longer and shorter words.
  std::vector<std::vector<g2p::StepAttention>> batched_attention;
  const auto batched = g2p::greedy_decode(model, words, 256, &batched_attention);
  for (std::size_t k = 0; k < words.size(); ++k) {
    std::vector<std::vector<g2p::StepAttention>> alone_attention;
    const auto alone = g2p::greedy_decode(model, {words[k]}, 1, &alone_attention);
    ASSERT_EQ(alone[0], batched[k]) << data.entries[k].word;
    ASSERT_EQ(alone_attention[0].size(), batched_attention[k].size());
    const auto fed_back = g2p::attend_outputs(model, *words[k], alone[0]);
    ASSERT_EQ(fed_back.size(), alone[0].size());
    for (std::size_t t = 0; t < fed_back.size(); ++t) {
      const auto& a = batched_attention[k][t];
      const auto& b = fed_back[t];
      ASSERT_EQ(a.weights.size(), b.weights.size());
      for (std::size_t l = 0; l < a.weights.size(); ++l) EXPECT_NEAR(a.weights[l], b.weights[l], 1e-5);
      if (a.continuous()) {
        EXPECT_NEAR(a.mu, b.mu, 1e-5);
        EXPECT_NEAR(a.sigma2, b.sigma2, 1e-5);
      }
      // Discrete weights: a distribution over the word's own letters only.
      if (!a.weights.empty()) {
        double sum = 0;
        for (double w : a.weights) sum += w;
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
  // The teacher-forcing loss of a pair alone equals its loss in a padded batch (mean over its
  // tokens, so a batch of one word is compared with that word's share).
  const auto& pair = data.train_pairs.front();
  const double alone = g2p::pair_loss(model, data, {pair}).item<double>();
  torch::NoGradGuard no_grad;
  std::vector<std::pair<std::size_t, std::size_t>> with_long{pair};
  for (const auto& p : data.train_pairs)
    if (data.entries[p.first].word.size() > data.entries[pair.first].word.size()) with_long.push_back(p);
  ASSERT_GT(with_long.size(), 1u);
  // Logits of the first pair from the batch: recompute through forward on the padded batch.
  std::vector<const std::vector<int>*> batch_words;
  for (const auto& p : with_long) batch_words.push_back(&data.encoded[p.first].letters);
  const g2p::LetterBatch batch = g2p::letter_batch(batch_words);
  const auto& reference = data.encoded[pair.first].references[pair.second];
  std::vector<std::int64_t> inputs{g2p::kPhonemeStart}, targets;
  for (int id : reference) {
    inputs.push_back(id);
    targets.push_back(id);
  }
  targets.push_back(g2p::kPhonemeEnd);
  const auto t = static_cast<std::int64_t>(inputs.size());
  const at::Tensor in = torch::tensor(inputs).unsqueeze(0).expand({batch.letters.size(0), t}).contiguous();
  const at::Tensor logits = model(batch.letters, batch.lengths, in)[0];
  const double padded = torch::nn::functional::cross_entropy(logits, torch::tensor(targets)).item<double>();
  EXPECT_NEAR(alone, padded, 1e-5) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Variants, G2pVariant, ::testing::ValuesIn(g2p::variant_names()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(G2pModel, UnknownVariantsAndBadBatchesAreNamed) {
  try {
    g2p::parse_variant("cont-entmax");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'cont-entmax'"));
    EXPECT_THAT(e.what(), HasSubstr("disc-sparsemax"));
  }
  const std::vector<int> empty;
  EXPECT_THROW(g2p::letter_batch({&empty}), std::invalid_argument);
  EXPECT_THROW(g2p::letter_batch({}), std::invalid_argument);
  const g2p::Dataset data = fixture();
  g2p::Seq2Seq model = trained(data, "softmax", 0);
  EXPECT_THROW(g2p::beam_decode(model, letters(data, {0}), 0), std::invalid_argument);
}

using G2pRun = sparcon_test::TempDirTest;

TEST_F(G2pRun, ResumedRunEqualsTheUninterruptedOneAndPredictsUnseenWords) {
  const g2p::Dataset data = fixture();
  g2p::TrainOptions o = tiny("cont-sparsemax");
  o.batch_size = 2;  // 7 steps per epoch, 70 in all: enough for the model to output phonemes
  o.epochs = 10;
  o.patience = 10;
  o.out = dir_ / "straight";
  const g2p::TrainResult straight = g2p::train(data, o);
  o.out = dir_ / "interrupted";
  o.epochs = 5;
  g2p::train(data, o);
  EXPECT_THROW(g2p::train(data, o), std::runtime_error);  // never overwritten without --resume
  o.epochs = 10;
  o.resume = true;
  const g2p::TrainResult resumed = g2p::train(data, o);
  EXPECT_EQ(straight.best_epoch, resumed.best_epoch);
  EXPECT_EQ(straight.greedy.per, resumed.greedy.per);
  EXPECT_EQ(straight.beam.wer, resumed.beam.wer);
  const auto history = [](const fs::path& dir) {
    auto state = nlohmann::json::parse(sparcon_test::read(dir / "state.json"));
    for (auto& e : state["history"]) e.erase("seconds");
    return state["history"].dump();
  };
  EXPECT_EQ(history(dir_ / "straight"), history(dir_ / "interrupted"));
  // The best models are the same tensors.
  g2p::LoadedModel a = g2p::load_best(dir_ / "straight"), b = g2p::load_best(dir_ / "interrupted");
  const auto pa = a.model->named_parameters(), pb = b.model->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  // A word the dictionary lacks, in lower case: phonemes of the vocabulary, one attention per phoneme.
  const g2p::Prediction p = g2p::predict(a, "bassist", 3);
  EXPECT_EQ(p.word, "BASSIST");
  EXPECT_FALSE(p.phonemes.empty());
  EXPECT_EQ(p.attention.size(), p.phonemes.size());
  for (const auto& ph : p.phonemes) EXPECT_TRUE(a.phonemes.contains(ph)) << ph;
  for (const auto& s : p.attention) EXPECT_TRUE(s.continuous());
  try {
    g2p::predict(a, "b4t");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'b4t'"));
  }
  // Every damage of state.json and of the best checkpoint is one line naming the file.
  sparcon_test::expect_run_damage_reported(dir_ / "straight", [&] { g2p::load_best(dir_ / "straight"); });
}

TEST_F(G2pRun, TheExperimentWritesResultsAndAWellFormedReport) {
  const g2p::Dataset data = fixture();
  g2p::ExperimentOptions options;
  options.variants = {"sparsemax", "cont-softmax"};
  options.train = tiny("softmax");
  options.train.batch_size = 2;
  options.train.epochs = 30;
  options.train.patience = 30;
  options.out = dir_;
  options.report_words = 2;
  const auto results = g2p::run_experiment(data, options);
  ASSERT_EQ(results.size(), 2u);
  const auto json = nlohmann::json::parse(sparcon_test::read(dir_ / "results.json"));
  EXPECT_EQ(json.at("variants").size(), 2u);
  EXPECT_EQ(json.at("variants")[1].at("name"), "cont-softmax");
  EXPECT_THAT(sparcon_test::read(dir_ / "results.md"), HasSubstr("| cont-softmax |"));
  const std::string html = sparcon_test::read(dir_ / "report.html");
  EXPECT_THAT(html, HasSubstr("class=\"strips\""));  // the continuous variant's densities
  EXPECT_THAT(html, HasSubstr("class=\"heatmap\""));
}

}  // namespace
