// Decoding the phonemes of words with a trained Seq2Seq: greedy (the most likely phoneme at each
// step) and beam search (the K most likely prefixes by summed log-probability; K = 1 is greedy),
// batched over words. A word's output ends at </s> or after max_output_length(L) phonemes.
#pragma once

#include <cstddef>
#include <vector>

#include "alignment.h"
#include "model.h"

namespace g2p {

/// Output phonemes allowed for a word of L letters: 2 L + 4 (acronyms read letter by letter,
/// "ZZZ" -> Z IY Z IY Z IY, are the longest).
inline std::size_t max_output_length(std::size_t letters) { return 2 * letters + 4; }

/// A batch of words as the encoder takes it: letters (B, L) int64 padded with kLetterPad,
/// lengths (B) int64. Throws std::invalid_argument for no words or an empty word (naming it).
struct LetterBatch {
  at::Tensor letters, lengths;
};
LetterBatch letter_batch(const std::vector<const std::vector<int>*>& words);

/// The view's tensors as contiguous double tensors, as step_attention reads them.
StepView in_double(const StepView& view);

/// The attention of row b of a view (in_double) over the first `length` letters as a
/// StepAttention (the support of alpha = 2 densities from sparcon::Density1D).
StepAttention step_attention(const StepView& view, std::int64_t b, std::size_t length, double alpha);

/// Greedy decoding in batches of batch_size words: outputs[i] the phoneme ids of words[i]
/// without </s>. attention, if given, receives for each word the StepAttention of each output
/// phoneme (not of the step that emitted </s>). The model is put in eval mode for the call.
std::vector<std::vector<int>> greedy_decode(Seq2Seq& model, const std::vector<const std::vector<int>*>& words,
                                            std::size_t batch_size = 256,
                                            std::vector<std::vector<StepAttention>>* attention = nullptr);

/// Beam search with `beam` hypotheses per word: each step extends every unfinished hypothesis
/// by every phoneme and keeps the `beam` best prefixes by sum of log-softmax; a finished one
/// (ended by </s> or the length limit) keeps its score. Returns the best finished hypothesis of
/// each word (the best unfinished one if none finished) without </s>. beam = 1 gives
/// greedy_decode's outputs. Throws std::invalid_argument for beam = 0.
std::vector<std::vector<int>> beam_decode(Seq2Seq& model, const std::vector<const std::vector<int>*>& words,
                                          std::size_t beam, std::size_t batch_size = 64);

/// The attention of each phoneme of `output` (ids without </s>) for the word `letters`, the
/// decoder fed `output` as its previous outputs (teacher forcing): for greedy_decode's output
/// the same as its attention.
std::vector<StepAttention> attend_outputs(Seq2Seq& model, const std::vector<int>& letters, const std::vector<int>& output);

}  // namespace g2p
