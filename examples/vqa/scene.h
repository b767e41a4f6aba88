// Scenes of the VQA experiment: a canvas holding 1 to 4 Fashion-MNIST items at random,
// non-overlapping positions (optionally rescaled), plus clutter (small pieces cut from other
// items), generated from a seed. A scene's items all come from one split, so that training
// scenes hold training items only and test scenes test items only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "box.h"
#include "fashion_mnist.h"
#include "kit/image.h"

namespace vqa {

struct SceneOptions {
  int canvas = 84;        ///< the canvas is canvas x canvas pixels (84: a 14 x 14 grid of 6 x 6 cells)
  int min_items = 1;      ///< items per scene, uniform in [min_items, max_items]
  int max_items = 4;
  int min_side = 20;      ///< an item's 28 x 28 image is resized to s x s, s uniform in [min_side, max_side]
  int max_side = 28;      ///< (28 and 28: no rescaling)
  int gap = 2;            ///< item boxes are at least gap pixels apart (separated(), box.h)
  int clutter = 4;        ///< clutter pieces per scene (fewer when no place is found)
  int clutter_side = 8;   ///< a piece is a clutter_side x clutter_side square of another item
  int clutter_gap = 2;    ///< a piece's square keeps this far from every item box
};

/// Throws std::invalid_argument naming the option unless 1 <= min_items <= max_items <= 4,
/// 8 <= min_side <= max_side <= min(28, canvas), 8 <= canvas <= 512, gap, clutter, clutter_gap >= 0 and
/// 1 <= clutter_side <= 28.
void check_scene_options(const SceneOptions& options);

struct SceneItem {
  int label = 0;            ///< the class, 0..9
  std::size_t source = 0;   ///< its index in the split's FashionMnist
  int side = 28;            ///< the side it was resized to
  Box box;                  ///< the tight box of its ink on the canvas: every pixel it drew lies inside
};

struct Clutter {
  std::size_t source = 0;   ///< the item it was cut from (never one of the scene's items)
  Box box;                  ///< the square it covers on the canvas
};

struct Scene {
  Split split = Split::kTrain;
  std::uint64_t seed = 0;
  std::size_t index = 0;
  kit::Image image;               ///< canvas x canvas, 1 channel, 0 background
  std::vector<SceneItem> items;   ///< 1 to 4, boxes pairwise separated by the gap
  std::vector<Clutter> clutter;
};

/// The generator of scene `index` of a split: std::mt19937_64 seeded with
/// splitmix64(seed xor splitmix64(2 * index + (split == test))), so each scene depends only on
/// (seed, split, index), not on the scenes generated before it.
std::mt19937_64 scene_rng(std::uint64_t seed, Split split, std::size_t index, std::uint64_t stream = 0);

/// SplitMix64's finaliser (Steele et al. 2014): a bijection of 64-bit words mixing every bit.
std::uint64_t splitmix64(std::uint64_t x);

/// The s x s resizing of a 28 x 28 item (row-major, 784 bytes) by bilinear interpolation between
/// pixel centres, in integers: output pixel i samples the input at u = (i + 1/2) 28 / s - 1/2,
/// clamped to [0, 27], in units of 1/256, so the result is the same on every platform. s = 28
/// returns the item unchanged.
std::vector<std::uint8_t> resize_item(const std::uint8_t* item, int side);

/// Scene `index` of items.split (all draws by kit::uniform_below on scene_rng, so the same with
/// every standard library):
///  1. n = uniform in [min_items, max_items]; for each item, a source uniform in 0..size-1 (the
///     same source not twice) and a side s uniform in [min_side, max_side];
///  2. each item's s x s image at a top-left corner uniform in [0, canvas - s]^2; its box is the
///     bounding box of its non-zero pixels there; a position whose box is not separated by `gap`
///     from the boxes placed before is drawn again (up to 100 times, then the whole placement
///     starts again);
///  3. `clutter` pieces: a source uniform among the other items, a square of clutter_side at a
///     corner uniform in the item with at least clutter_side^2 / 4 non-zero pixels (10 tries), put at a
///     corner uniform on the canvas whose square is clutter_gap from every item box (20 tries).
/// The canvas is the pixelwise maximum of the items and the pieces. Throws std::invalid_argument
/// for bad options (check_scene_options) or fewer than max_items + 1 items in the split.
Scene generate_scene(const FashionMnist& items, const SceneOptions& options, std::uint64_t seed, std::size_t index);

/// Scenes 0..count-1 of generate_scene.
std::vector<Scene> generate_scenes(const FashionMnist& items, const SceneOptions& options, std::uint64_t seed,
                                   std::size_t count);

}  // namespace vqa
