// Fashion-MNIST (Xiao, Rasul and Vollgraf 2017) as Debian's package dataset-fashion-mnist
// installs it: four gzipped IDX files under /usr/share/datasets/fashion-mnist,
//   train-images-idx3-ubyte.gz  60,000 x 28 x 28     train-labels-idx1-ubyte.gz  60,000
//   t10k-images-idx3-ubyte.gz   10,000 x 28 x 28     t10k-labels-idx1-ubyte.gz   10,000
// Pixels are 0 (background) to 255 (ink); labels 0..9 (classes.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace vqa {

/// The folder the Debian package installs the files to.
inline constexpr const char* kFashionMnistFolder = "/usr/share/datasets/fashion-mnist";
/// What to install when a file is missing, for error messages.
inline constexpr const char* kFashionMnistPackage = "dataset-fashion-mnist";

enum class Split { kTrain, kTest };

/// "train" or "test".
const char* split_name(Split split);

inline constexpr std::size_t kItemSide = 28;              ///< items are 28 x 28
inline constexpr std::size_t kItemPixels = kItemSide * kItemSide;

/// One split: item i has pixels[i * 784 .. (i + 1) * 784) (row-major) and label labels[i].
struct FashionMnist {
  Split split = Split::kTrain;
  std::vector<std::uint8_t> pixels;
  std::vector<int> labels;

  [[nodiscard]] std::size_t size() const { return labels.size(); }
  /// Pixel (row, col) of item i (no bounds checks).
  [[nodiscard]] std::uint8_t pixel(std::size_t i, std::size_t row, std::size_t col) const {
    return pixels[i * kItemPixels + row * kItemSide + col];
  }
};

/// The images and labels file of a split under folder ("train-..." or "t10k-...").
std::filesystem::path images_file(const std::filesystem::path& folder, Split split);
std::filesystem::path labels_file(const std::filesystem::path& folder, Split split);

/// Reads a split from its two files (read_gzip, parse_idx) and checks them: the images file's
/// magic 2051 with sizes {n, 28, 28}, the labels file's magic 2049 with sizes {n}, the same n in
/// both, every label 0..9. Errors name the file (std::runtime_error); a missing file's message
/// also names the Debian package kFashionMnistPackage and scripts/setup.sh, which installs it.
FashionMnist load_fashion_mnist(const std::filesystem::path& folder, Split split);

/// Whether both files of the split exist under folder (the tests on the real data skip otherwise).
bool fashion_mnist_present(const std::filesystem::path& folder);

}  // namespace vqa
