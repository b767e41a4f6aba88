// Where the attention looks against where the answer's evidence is (issue 13's localisation
// metrics), for one question: the evidence is the boxes of the items the answer depends on
// (questions.h), in positions (box.h: to_rect), pairwise disjoint (the scene's items do not
// overlap). Questions without evidence (a count of 0, "no") have none of these figures; the
// experiment averages over the questions that have evidence.
//
//  - mass in the evidence: discrete attention, a rows x cols grid of cell weights w_rc (the
//    14 x 14 grid over the image; cell (r, c) = [r / rows, (r + 1) / rows] x [c / cols,
//    (c + 1) / cols]), each cell's weight split by the fraction of its area inside the boxes:
//      mass = sum_rc w_rc sum_b |cell_rc n b| / |cell_rc|;
//    continuous attention, the density's integral over the boxes, sum_b int_b p(t) dt
//    (density_integral.h).
//  - the support S against the evidence E = the union of the boxes (clipped to the unit square):
//    discrete, S = the union of the cells with w_rc > 0; continuous sparsemax (any alpha > 1),
//    S = the support ellipse intersected with the unit square (the image). Then
//      iou = |S n E| / |S u E|,  inside = |S n E| / |S| (the fraction of the support in the
//      evidence),  area = |S| (the fraction of the image the support covers; the image is 1 x 1).
//    Continuous softmax (alpha = 1) has no bounded support: no support figures.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "box.h"
#include "density_integral.h"
#include "kit/matrix.h"

namespace vqa {

/// The evidence boxes of a question on a canvas x canvas scene, as rectangles of positions.
std::vector<Rect> evidence_rects(const std::vector<Box>& evidence, int canvas);

/// Throws std::invalid_argument unless every rectangle is non-empty and finite and no two
/// overlap with positive area.
void check_evidence(const std::vector<Rect>& evidence);

struct SupportOverlap {
  double iou = std::numeric_limits<double>::quiet_NaN();
  double inside = std::numeric_limits<double>::quiet_NaN();  ///< NaN for an empty support
  double area = std::numeric_limits<double>::quiet_NaN();
};

/// sum_rc w_rc sum_b |cell_rc n b| / |cell_rc| (see above). Weights need not sum to 1 (the mass
/// is then of their total). Throws std::invalid_argument for an empty or non-finite matrix, a
/// negative weight, or bad evidence (check_evidence).
double grid_mass(const kit::Matrix& weights, const std::vector<Rect>& evidence);

/// S = the cells with weight > 0. Throws as grid_mass.
SupportOverlap grid_support_overlap(const kit::Matrix& weights, const std::vector<Rect>& evidence);

/// sum_b int_b p(t) dt. Throws for bad evidence.
double density_mass_in(const Density& density, const std::vector<Rect>& evidence);

/// S = the support ellipse n [0, 1]^2, for alpha > 1. Throws std::invalid_argument for
/// alpha = 1, or bad evidence.
SupportOverlap ellipse_support_overlap(const Density& density, const std::vector<Rect>& evidence);

/// Sums over questions: means of each figure over the questions added (NaN figures skipped,
/// as the inside of an empty support).
struct LocalisationStats {
  std::size_t questions = 0;        ///< questions added (those with evidence)
  double mass_sum = 0;
  std::size_t support_count = 0, inside_count = 0;
  double iou_sum = 0, inside_sum = 0, area_sum = 0;

  /// One question's figures; support may be all NaN (continuous softmax).
  void add(double mass, const SupportOverlap& support = {});
  [[nodiscard]] double mass() const;    ///< mean mass in the evidence; NaN for none
  [[nodiscard]] double iou() const;     ///< mean over questions with a support; NaN for none
  [[nodiscard]] double inside() const;  ///< mean over questions with a non-empty support
  [[nodiscard]] double area() const;    ///< mean over questions with a support
};

}  // namespace vqa
