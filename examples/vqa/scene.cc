#include "scene.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kit/split.h"

namespace vqa {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("vqa::SceneOptions: " + what);
}

int uniform_in(std::mt19937_64& rng, int low, int high) {  // [low, high]
  return low + static_cast<int>(kit::uniform_below(rng, static_cast<std::uint64_t>(high - low + 1)));
}

/// The bounding box of the non-zero pixels of an s x s patch placed at (top, left); empty if none.
Box ink_box(const std::vector<std::uint8_t>& patch, int side, int top, int left) {
  int r0 = side, r1 = -1, c0 = side, c1 = -1;
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c)
      if (patch[static_cast<std::size_t>(r * side + c)] != 0) {
        r0 = std::min(r0, r); r1 = std::max(r1, r); c0 = std::min(c0, c); c1 = std::max(c1, c);
      }
  if (r1 < 0) return Box{};
  return Box{top + r0, left + c0, top + r1 + 1, left + c1 + 1};
}

void paint(kit::Image& image, const std::uint8_t* patch, int rows, int cols, int stride, int top, int left) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      auto& px = image.pixels[static_cast<std::size_t>(top + r) * image.width + static_cast<std::size_t>(left + c)];
      px = std::max(px, patch[r * stride + c]);
    }
}

}  // namespace

void check_scene_options(const SceneOptions& o) {
  require(o.canvas >= 8 && o.canvas <= 512, "canvas " + std::to_string(o.canvas) + " is outside 8..512");
  require(1 <= o.min_items && o.min_items <= o.max_items && o.max_items <= 4,
          "items " + std::to_string(o.min_items) + ".." + std::to_string(o.max_items) + " are not within 1..4");
  require(8 <= o.min_side && o.min_side <= o.max_side && o.max_side <= std::min(28, o.canvas),
          "sides " + std::to_string(o.min_side) + ".." + std::to_string(o.max_side) + " are not within 8..min(28, canvas)");
  require(o.gap >= 0 && o.clutter >= 0 && o.clutter_gap >= 0, "gap, clutter and clutter_gap must be >= 0");
  require(o.clutter_side >= 1 && o.clutter_side <= 28 && o.clutter_side <= o.canvas,
          "clutter_side " + std::to_string(o.clutter_side) + " is outside 1..28");
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::mt19937_64 scene_rng(std::uint64_t seed, Split split, std::size_t index, std::uint64_t stream) {
  const std::uint64_t key = 2 * static_cast<std::uint64_t>(index) + (split == Split::kTest ? 1 : 0);
  return std::mt19937_64(splitmix64(seed ^ splitmix64(key) ^ splitmix64(splitmix64(stream))));
}

std::vector<std::uint8_t> resize_item(const std::uint8_t* item, int side) {
  if (side < 1) throw std::invalid_argument("vqa::resize_item: side " + std::to_string(side) + " < 1");
  constexpr int n = static_cast<int>(kItemSide);
  std::vector<int> pos(static_cast<std::size_t>(side));
  for (int i = 0; i < side; ++i) pos[static_cast<std::size_t>(i)] = std::clamp((2 * i + 1) * n * 128 / side - 128, 0, (n - 1) * 256);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(side * side));
  for (int i = 0; i < side; ++i) {
    const int y = pos[static_cast<std::size_t>(i)], y0 = y >> 8, y1 = std::min(y0 + 1, n - 1), fy = y & 255;
    for (int k = 0; k < side; ++k) {
      const int x = pos[static_cast<std::size_t>(k)], x0 = x >> 8, x1 = std::min(x0 + 1, n - 1), fx = x & 255;
      const long v = static_cast<long>(item[y0 * n + x0]) * (256 - fx) * (256 - fy) +
                     static_cast<long>(item[y0 * n + x1]) * fx * (256 - fy) +
                     static_cast<long>(item[y1 * n + x0]) * (256 - fx) * fy +
                     static_cast<long>(item[y1 * n + x1]) * fx * fy;
      out[static_cast<std::size_t>(i * side + k)] = static_cast<std::uint8_t>((v + 32768) >> 16);
    }
  }
  return out;
}

Scene generate_scene(const FashionMnist& items, const SceneOptions& options, std::uint64_t seed, std::size_t index) {
  check_scene_options(options);
  if (items.size() < static_cast<std::size_t>(options.max_items) + 1)
    throw std::invalid_argument("vqa::generate_scene: the " + std::string(split_name(items.split)) + " split has " +
                                std::to_string(items.size()) + " items, fewer than max_items + 1");
  std::mt19937_64 rng = scene_rng(seed, items.split, index);
  Scene scene;
  scene.split = items.split;
  scene.seed = seed;
  scene.index = index;
  const int canvas = options.canvas;

  const int n = uniform_in(rng, options.min_items, options.max_items);
  std::vector<std::size_t> sources;
  std::vector<int> sides;
  while (static_cast<int>(sources.size()) < n) {
    const std::size_t s = kit::uniform_below(rng, items.size());
    if (std::find(sources.begin(), sources.end(), s) != sources.end()) continue;
    sources.push_back(s);
    sides.push_back(uniform_in(rng, options.min_side, options.max_side));
  }
  std::vector<std::vector<std::uint8_t>> patches;
  for (int i = 0; i < n; ++i)
    patches.push_back(resize_item(&items.pixels[sources[static_cast<std::size_t>(i)] * kItemPixels], sides[static_cast<std::size_t>(i)]));

  // Placement: each item by rejection; after 100 failures for one item, everything again.
  std::vector<std::array<int, 2>> corners;
  int restarts = 0;
  while (static_cast<int>(scene.items.size()) < n) {
    const std::size_t i = scene.items.size();
    const int side = sides[i];
    bool placed = false;
    for (int attempt = 0; attempt < 100 && !placed; ++attempt) {
      const int top = uniform_in(rng, 0, canvas - side), left = uniform_in(rng, 0, canvas - side);
      Box box = ink_box(patches[i], side, top, left);
      if (box.empty()) box = Box{top, left, top + 1, left + 1};  // a blank item: a 1-pixel box at its corner
      const bool free = std::all_of(scene.items.begin(), scene.items.end(),
                                    [&](const SceneItem& other) { return separated(other.box, box, options.gap); });
      if (!free) continue;
      scene.items.push_back({items.labels[sources[i]], sources[i], side, box});
      corners.push_back({top, left});
      placed = true;
    }
    if (!placed) {
      if (++restarts > 1000)
        throw std::invalid_argument("vqa::generate_scene: no placement of " + std::to_string(n) + " items on a " +
                                    std::to_string(canvas) + "-pixel canvas with gap " + std::to_string(options.gap));
      scene.items.clear();
      corners.clear();
    }
  }
  scene.image.width = scene.image.height = static_cast<std::size_t>(canvas);
  scene.image.channels = 1;
  scene.image.pixels.assign(static_cast<std::size_t>(canvas * canvas), 0);
  for (int i = 0; i < n; ++i) {
    const int side = sides[static_cast<std::size_t>(i)];
    paint(scene.image, patches[static_cast<std::size_t>(i)].data(), side, side, side, corners[static_cast<std::size_t>(i)][0],
          corners[static_cast<std::size_t>(i)][1]);
  }

  const int piece = options.clutter_side, item_side = static_cast<int>(kItemSide);
  for (int c = 0; c < options.clutter; ++c) {
    std::size_t source = 0;
    do {
      source = kit::uniform_below(rng, items.size());
    } while (std::find(sources.begin(), sources.end(), source) != sources.end());
    const std::uint8_t* item = &items.pixels[source * kItemPixels];
    int crop_top = 0, crop_left = 0;
    bool inked = false;
    for (int attempt = 0; attempt < 10 && !inked; ++attempt) {
      crop_top = uniform_in(rng, 0, item_side - piece);
      crop_left = uniform_in(rng, 0, item_side - piece);
      int count = 0;
      for (int r = 0; r < piece; ++r)
        for (int k = 0; k < piece; ++k) count += item[(crop_top + r) * item_side + crop_left + k] != 0;
      inked = 4 * count >= piece * piece;
    }
    if (!inked) continue;
    for (int attempt = 0; attempt < 20; ++attempt) {
      const int top = uniform_in(rng, 0, canvas - piece), left = uniform_in(rng, 0, canvas - piece);
      const Box box{top, left, top + piece, left + piece};
      const bool free = std::all_of(scene.items.begin(), scene.items.end(),
                                    [&](const SceneItem& it) { return separated(it.box, box, options.clutter_gap); });
      if (!free) continue;
      paint(scene.image, item + crop_top * item_side + crop_left, piece, piece, item_side, top, left);
      scene.clutter.push_back({source, box});
      break;
    }
  }
  return scene;
}

std::vector<Scene> generate_scenes(const FashionMnist& items, const SceneOptions& options, std::uint64_t seed,
                                   std::size_t count) {
  std::vector<Scene> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(generate_scene(items, options, seed, i));
  return out;
}

}  // namespace vqa
