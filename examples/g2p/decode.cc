// Greedy and beam-search decoding (decode.h).
#include "decode.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sparcon/continuous.h"
#include "vocabulary.h"

namespace g2p {
namespace {

// Restores the model's training mode on scope exit.
class EvalMode {
 public:
  explicit EvalMode(Seq2Seq& model) : model_(model), was_training_(model->is_training()) { model_->eval(); }
  ~EvalMode() { model_->train(was_training_); }
  EvalMode(const EvalMode&) = delete;
  EvalMode& operator=(const EvalMode&) = delete;

 private:
  Seq2Seq& model_;
  bool was_training_;
};

// pad and <s> are never outputs: their logits set to -inf.
at::Tensor outputs_only(at::Tensor logits) {
  return logits.index_fill_(1, torch::tensor({static_cast<std::int64_t>(kPhonemePad), static_cast<std::int64_t>(kPhonemeStart)}),
                            -std::numeric_limits<float>::infinity());
}

std::vector<const std::vector<int>*> slice(const std::vector<const std::vector<int>*>& words, std::size_t begin,
                                           std::size_t end) {
  return {words.begin() + static_cast<std::ptrdiff_t>(begin), words.begin() + static_cast<std::ptrdiff_t>(end)};
}

}  // namespace

LetterBatch letter_batch(const std::vector<const std::vector<int>*>& words) {
  if (words.empty()) throw std::invalid_argument("letter_batch: no words");
  std::size_t longest = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i]->empty()) throw std::invalid_argument("letter_batch: word " + std::to_string(i) + " is empty");
    longest = std::max(longest, words[i]->size());
  }
  const auto b = static_cast<std::int64_t>(words.size());
  LetterBatch batch{torch::full({b, static_cast<std::int64_t>(longest)}, kLetterPad, torch::kLong),
                    torch::empty({b}, torch::kLong)};
  auto letters = batch.letters.accessor<std::int64_t, 2>();
  auto lengths = batch.lengths.accessor<std::int64_t, 1>();
  for (std::int64_t i = 0; i < b; ++i) {
    const auto& w = *words[static_cast<std::size_t>(i)];
    for (std::size_t l = 0; l < w.size(); ++l) letters[i][static_cast<std::int64_t>(l)] = w[l];
    lengths[i] = static_cast<std::int64_t>(w.size());
  }
  return batch;
}

StepView in_double(const StepView& view) {
  auto convert = [](const at::Tensor& t) { return t.defined() ? t.to(torch::kDouble).contiguous() : t; };
  return {convert(view.weights), convert(view.mu), convert(view.sigma2)};
}

StepAttention step_attention(const StepView& view, std::int64_t b, std::size_t length, double alpha) {
  StepAttention s;
  if (view.weights.defined()) {
    const double* row = view.weights.data_ptr<double>() + b * view.weights.size(1);
    s.weights.assign(row, row + length);
  }
  if (view.mu.defined()) {
    s.mu = view.mu.data_ptr<double>()[b];
    s.sigma2 = view.sigma2.data_ptr<double>()[b];
    const double a = sparcon::Density1D<double>(alpha, s.mu, s.sigma2).half_width();
    if (std::isfinite(a)) {
      s.support_begin = s.mu - a;
      s.support_end = s.mu + a;
    }
  }
  return s;
}

std::vector<std::vector<int>> greedy_decode(Seq2Seq& model, const std::vector<const std::vector<int>*>& words,
                                            std::size_t batch_size,
                                            std::vector<std::vector<StepAttention>>* attention) {
  torch::NoGradGuard no_grad;
  EvalMode eval(model);
  std::vector<std::vector<int>> outputs(words.size());
  if (attention != nullptr) attention->assign(words.size(), {});
  for (std::size_t begin = 0; begin < words.size(); begin += batch_size) {
    const std::size_t end = std::min(words.size(), begin + batch_size);
    const LetterBatch batch = letter_batch(slice(words, begin, end));
    const Encoded encoded = model->encode(batch.letters, batch.lengths);
    DecoderState state = model->start(encoded);
    const auto b = static_cast<std::int64_t>(end - begin);
    at::Tensor previous = torch::full({b}, kPhonemeStart, torch::kLong);
    std::vector<bool> done(static_cast<std::size_t>(b), false);
    std::size_t remaining = end - begin, longest = 0;
    for (std::size_t i = begin; i < end; ++i) longest = std::max(longest, max_output_length(words[i]->size()));
    for (std::size_t t = 0; remaining > 0 && t <= longest; ++t) {
      StepView view;
      const at::Tensor logits =
          outputs_only(model->step(encoded, state, previous, attention != nullptr ? &view : nullptr));
      previous = logits.argmax(1);
      if (attention != nullptr) view = in_double(view);
      const auto next = previous.accessor<std::int64_t, 1>();
      for (std::int64_t k = 0; k < b; ++k) {
        const auto i = begin + static_cast<std::size_t>(k);
        if (done[static_cast<std::size_t>(k)]) continue;
        const auto length = words[i]->size();
        if (next[k] == kPhonemeEnd || t >= max_output_length(length)) {
          done[static_cast<std::size_t>(k)] = true;
          --remaining;
          continue;
        }
        outputs[i].push_back(static_cast<int>(next[k]));
        if (attention != nullptr)
          (*attention)[i].push_back(step_attention(view, k, length, model->options.variant.alpha));
      }
    }
  }
  return outputs;
}

std::vector<std::vector<int>> beam_decode(Seq2Seq& model, const std::vector<const std::vector<int>*>& words,
                                          std::size_t beam, std::size_t batch_size) {
  if (beam == 0) throw std::invalid_argument("beam_decode: beam = 0; at least one hypothesis is needed");
  torch::NoGradGuard no_grad;
  EvalMode eval(model);
  const auto k = static_cast<std::int64_t>(beam);
  const double minus_inf = -std::numeric_limits<double>::infinity();
  std::vector<std::vector<int>> outputs(words.size());
  for (std::size_t begin = 0; begin < words.size(); begin += batch_size) {
    const std::size_t end = std::min(words.size(), begin + batch_size);
    const auto b = static_cast<std::int64_t>(end - begin);
    const LetterBatch batch = letter_batch(slice(words, begin, end));
    Encoded encoded = model->encode(batch.letters, batch.lengths);
    // Every word's encoding repeated for its k hypotheses: row w * k + j is hypothesis j of word w.
    encoded.states = encoded.states.repeat_interleave(k, 0);
    encoded.lengths = encoded.lengths.repeat_interleave(k, 0);
    encoded.valid = encoded.valid.repeat_interleave(k, 0);
    DecoderState state = model->start(encoded);
    // Scores (B, k) in double: only hypothesis 0 is live at first, so the k first steps differ.
    at::Tensor scores = torch::full({b, k}, minus_inf, torch::kDouble);
    scores.select(1, 0).fill_(0);
    at::Tensor finished = torch::zeros({b, k}, torch::kBool);
    at::Tensor previous = torch::full({b * k}, kPhonemeStart, torch::kLong);
    std::vector<std::int64_t> limit(static_cast<std::size_t>(b));
    for (std::int64_t w = 0; w < b; ++w)
      limit[static_cast<std::size_t>(w)] =
          static_cast<std::int64_t>(max_output_length(words[begin + static_cast<std::size_t>(w)]->size()));
    std::vector<at::Tensor> tokens, parents;  // per step: (B, k) the token and the hypothesis it extends
    const at::Tensor word_offset = (torch::arange(b, torch::kLong) * k).unsqueeze(1);
    // A finished hypothesis extends only by padding, at no cost.
    const std::int64_t v = model->options.phonemes;
    const at::Tensor only_pad =
        torch::full({1, 1, v}, minus_inf, torch::kDouble).index_fill_(2, torch::tensor({kPhonemePad}), 0.0);
    for (std::int64_t t = 0;; ++t) {
      // Words with `limit` phonemes end now, as greedy_decode ends them.
      for (std::int64_t w = 0; w < b; ++w)
        if (t >= limit[static_cast<std::size_t>(w)]) finished[w].fill_(true);
      if (finished.all().item<bool>()) break;
      const at::Tensor logits = outputs_only(model->step(encoded, state, previous));
      const at::Tensor logp = torch::where(finished.unsqueeze(2), only_pad,
                                           torch::log_softmax(logits.to(torch::kDouble), 1).view({b, k, v}));
      const at::Tensor candidates = (scores.unsqueeze(2) + logp).view({b, k * v});
      const auto [best, index] = candidates.topk(k, 1);
      const at::Tensor parent = index.div(v, "floor"), token = index.remainder(v);
      scores = best;
      finished = finished.gather(1, parent) | token.eq(kPhonemeEnd);
      tokens.push_back(token);
      parents.push_back(parent);
      const at::Tensor rows = (word_offset + parent).view({-1});
      state.h = state.h.index_select(0, rows);
      state.c = state.c.index_select(0, rows);
      state.context = state.context.index_select(0, rows);
      previous = token.view({-1});
    }
    // The best hypothesis of each word (all are finished: by </s> or by the limit).
    const auto sc = scores.accessor<double, 2>();
    for (std::int64_t w = 0; w < b; ++w) {
      std::int64_t j = 0;
      for (std::int64_t c = 1; c < k; ++c)
        if (sc[w][c] > sc[w][j]) j = c;
      std::vector<int> reversed;
      for (auto t = static_cast<std::ptrdiff_t>(tokens.size()) - 1; t >= 0; --t) {
        const auto token = tokens[static_cast<std::size_t>(t)][w][j].item<std::int64_t>();
        if (token != kPhonemeEnd && token != kPhonemePad) reversed.push_back(static_cast<int>(token));
        j = parents[static_cast<std::size_t>(t)][w][j].item<std::int64_t>();
      }
      outputs[begin + static_cast<std::size_t>(w)].assign(reversed.rbegin(), reversed.rend());
    }
  }
  return outputs;
}

std::vector<StepAttention> attend_outputs(Seq2Seq& model, const std::vector<int>& letters, const std::vector<int>& output) {
  torch::NoGradGuard no_grad;
  EvalMode eval(model);
  const LetterBatch batch = letter_batch({&letters});
  const Encoded encoded = model->encode(batch.letters, batch.lengths);
  DecoderState state = model->start(encoded);
  std::vector<StepAttention> steps;
  int previous = kPhonemeStart;
  for (const int id : output) {
    StepView view;
    model->step(encoded, state, torch::full({1}, previous, torch::kLong), &view);
    steps.push_back(step_attention(in_double(view), 0, letters.size(), model->options.variant.alpha));
    previous = id;
  }
  return steps;
}

}  // namespace g2p
