#include "fashion_mnist.h"

#include <stdexcept>
#include <string>

#include "gzip_file.h"
#include "idx.h"

namespace vqa {
namespace {

std::string prefix(Split split) { return split == Split::kTrain ? "train" : "t10k"; }

IdxArray read_idx_file(const std::filesystem::path& file, std::size_t dims) {
  if (!std::filesystem::exists(file))
    throw std::runtime_error(file.string() + ": missing; Fashion-MNIST comes from Debian's package " +
                             kFashionMnistPackage + " (apt-get install " + kFashionMnistPackage +
                             ", or bash scripts/setup.sh)");
  IdxArray array = parse_idx(read_gzip(file), file.string());
  if (array.sizes.size() != dims)
    throw std::runtime_error(file.string() + ": magic number " + std::to_string(0x0800 + array.sizes.size()) +
                             ", expected " + std::to_string(idx_magic(dims)));
  return array;
}

}  // namespace

const char* split_name(Split split) { return split == Split::kTrain ? "train" : "test"; }

std::filesystem::path images_file(const std::filesystem::path& folder, Split split) {
  return folder / (prefix(split) + "-images-idx3-ubyte.gz");
}

std::filesystem::path labels_file(const std::filesystem::path& folder, Split split) {
  return folder / (prefix(split) + "-labels-idx1-ubyte.gz");
}

FashionMnist load_fashion_mnist(const std::filesystem::path& folder, Split split) {
  const auto image_path = images_file(folder, split), label_path = labels_file(folder, split);
  IdxArray images = read_idx_file(image_path, 3);
  IdxArray labels = read_idx_file(label_path, 1);
  if (images.sizes[1] != kItemSide || images.sizes[2] != kItemSide)
    throw std::runtime_error(image_path.string() + ": images of " + std::to_string(images.sizes[1]) + " x " +
                             std::to_string(images.sizes[2]) + " pixels, expected 28 x 28");
  if (images.sizes[0] != labels.sizes[0])
    throw std::runtime_error(label_path.string() + ": " + std::to_string(labels.sizes[0]) + " labels for " +
                             std::to_string(images.sizes[0]) + " images in " + image_path.string());
  FashionMnist out;
  out.split = split;
  out.pixels = std::move(images.data);
  out.labels.reserve(labels.data.size());
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] > 9)
      throw std::runtime_error(label_path.string() + ": label " + std::to_string(labels.data[i]) + " of item " +
                               std::to_string(i) + " is outside 0..9");
    out.labels.push_back(labels.data[i]);
  }
  return out;
}

bool fashion_mnist_present(const std::filesystem::path& folder) {
  for (const Split s : {Split::kTrain, Split::kTest})
    if (!std::filesystem::exists(images_file(folder, s)) || !std::filesystem::exists(labels_file(folder, s)))
      return false;
  return true;
}

}  // namespace vqa
