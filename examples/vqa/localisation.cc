#include "localisation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace vqa {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const Rect kImage{0, 1, 0, 1};

Rect clip(const Rect& r) {
  return {std::max(r.t0_begin, 0.0), std::min(r.t0_end, 1.0), std::max(r.t1_begin, 0.0), std::min(r.t1_end, 1.0)};
}

double evidence_area(const std::vector<Rect>& evidence) {
  double sum = 0;
  for (const auto& b : evidence) sum += overlap_area(b, kImage);
  return sum;
}

SupportOverlap overlap(double support, double common, double evidence) {
  SupportOverlap out;
  out.area = support;
  const double united = support + evidence - common;
  out.iou = united > 0 ? common / united : 0.0;
  out.inside = support > 0 ? common / support : kNaN;
  return out;
}

void check_weights(const kit::Matrix& weights, const char* function) {
  kit::check_matrix(weights, function, "weights");
  for (std::size_t i = 0; i < weights.values.size(); ++i)
    if (weights.values[i] < 0)
      throw std::invalid_argument(std::string(function) + ": weight " + std::to_string(i) + " is negative (" +
                                  std::to_string(weights.values[i]) + ")");
}

Rect cell(const kit::Matrix& m, std::size_t r, std::size_t c) {
  return {static_cast<double>(r) / m.rows, static_cast<double>(r + 1) / m.rows, static_cast<double>(c) / m.cols,
          static_cast<double>(c + 1) / m.cols};
}

double mean(double sum, std::size_t n) { return n == 0 ? kNaN : sum / static_cast<double>(n); }

}  // namespace

std::vector<Rect> evidence_rects(const std::vector<Box>& evidence, int canvas) {
  std::vector<Rect> out;
  for (const auto& b : evidence) out.push_back(to_rect(b, canvas, canvas));
  return out;
}

void check_evidence(const std::vector<Rect>& evidence) {
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const Rect& r = evidence[i];
    if (!std::isfinite(r.t0_begin) || !std::isfinite(r.t0_end) || !std::isfinite(r.t1_begin) ||
        !std::isfinite(r.t1_end) || !(r.t0_end > r.t0_begin) || !(r.t1_end > r.t1_begin))
      throw std::invalid_argument("vqa: evidence box " + std::to_string(i) + " is empty or not finite");
    for (std::size_t j = 0; j < i; ++j)
      if (overlap_area(r, evidence[j]) > 0)
        throw std::invalid_argument("vqa: evidence boxes " + std::to_string(j) + " and " + std::to_string(i) + " overlap");
  }
}

double grid_mass(const kit::Matrix& weights, const std::vector<Rect>& evidence) {
  check_weights(weights, "vqa::grid_mass");
  check_evidence(evidence);
  double mass = 0;
  for (std::size_t r = 0; r < weights.rows; ++r)
    for (std::size_t c = 0; c < weights.cols; ++c) {
      const Rect cr = cell(weights, r, c);
      double inside = 0;
      for (const auto& b : evidence) inside += overlap_area(cr, b);
      mass += weights(r, c) * inside / cr.area();
    }
  return mass;
}

SupportOverlap grid_support_overlap(const kit::Matrix& weights, const std::vector<Rect>& evidence) {
  check_weights(weights, "vqa::grid_support_overlap");
  check_evidence(evidence);
  double support = 0, common = 0;
  for (std::size_t r = 0; r < weights.rows; ++r)
    for (std::size_t c = 0; c < weights.cols; ++c) {
      if (!(weights(r, c) > 0)) continue;
      const Rect cr = cell(weights, r, c);
      support += cr.area();
      for (const auto& b : evidence) common += overlap_area(cr, b);
    }
  return overlap(support, common, evidence_area(evidence));
}

double density_mass_in(const Density& density, const std::vector<Rect>& evidence) {
  check_evidence(evidence);
  double mass = 0;
  for (const auto& b : evidence) mass += density_mass(density, b);
  return mass;
}

SupportOverlap ellipse_support_overlap(const Density& density, const std::vector<Rect>& evidence) {
  check_evidence(evidence);
  const double support = support_area(density, kImage);
  double common = 0;
  for (const auto& b : evidence) common += support_area(density, clip(b));
  return overlap(support, common, evidence_area(evidence));
}

void LocalisationStats::add(double mass, const SupportOverlap& support) {
  ++questions;
  mass_sum += mass;
  if (support.area == support.area) {
    ++support_count;
    iou_sum += support.iou;
    area_sum += support.area;
  }
  if (support.inside == support.inside) {
    ++inside_count;
    inside_sum += support.inside;
  }
}

double LocalisationStats::mass() const { return mean(mass_sum, questions); }
double LocalisationStats::iou() const { return mean(iou_sum, support_count); }
double LocalisationStats::inside() const { return mean(inside_sum, inside_count); }
double LocalisationStats::area() const { return mean(area_sum, support_count); }

}  // namespace vqa
