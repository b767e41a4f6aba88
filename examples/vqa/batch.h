// Batches of the VQA model (model.h's Batch) from a split's examples, and from one image and a
// typed question (predict). A batch holds each scene once, however many of its questions it has,
// so the CNN runs once per scene.
#pragma once

#include <string>
#include <vector>

#include "dataset.h"
#include "kit/image.h"
#include "model.h"

namespace vqa {

/// The examples at `indices` of data: their scenes (each once, in order of first use), the
/// encoded questions padded to the longest, and the answers' ids.
Batch make_batch(const SplitData& data, const std::vector<std::size_t>& indices);

/// One question about one image: image 84 x 84 with 1 channel (grey; 0 background); a
/// question's words not in word_vocabulary() become <unk>, the answer is -1. Throws
/// std::invalid_argument naming the image's size or the empty question.
Batch question_batch(const kit::Image& image, const std::string& question);

}  // namespace vqa
