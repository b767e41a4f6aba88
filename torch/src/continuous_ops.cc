// The continuous operations with autograd (sparcon/torch/ops.h): expectations, ridge matrices,
// continuous attention and disc+cont moments, 1D or 2D by the shapes of the inputs. 2D scales
// are used symmetrised, sym(Sigma) = (Sigma + Sigma^T)/2, so that a gradient step (or gradcheck)
// may leave them unsymmetric; they must be positive definite.
#include <torch/autograd.h>

#include <map>
#include <memory>
#include <mutex>

#include "sparcon/attention.h"
#include "sparcon/continuous.h"
#include "backend.h"
#include "generic/attention_generic.h"
#include "generic/expectation_generic.h"
#include "sparcon/torch/ops.h"
#include "tensor_rows.h"

namespace sparcon::torch {
namespace detail {
namespace {

using ::torch::autograd::AutogradContext;
using ::torch::autograd::variable_list;

// ---- bases ----------------------------------------------------------------------------------

bool is_2d(const at::Tensor& centers) { return centers.dim() == 2; }

// Floating, and on the CPU unless the op runs its generic kernel (any_device).
void check_float(const at::Tensor& x, const char* fn, const char* name, bool any_device) {
  if (any_device)
    check_floating_any_device(x, fn, name);
  else
    check_floating(x, fn, name);
}

void check_basis_shapes(const char* fn, const at::Tensor& centers, const at::Tensor& widths, bool any_device = false) {
  check_float(centers, fn, "centers", any_device);
  check_float(widths, fn, "widths", any_device);
  const bool one = centers.dim() == 1 && widths.dim() == 1 && widths.size(0) == centers.size(0);
  const bool two = centers.dim() == 2 && centers.size(1) == 2 && widths.dim() == 3 &&
                   widths.size(0) == centers.size(0) && widths.size(1) == 2 && widths.size(2) == 2;
  TORCH_CHECK_VALUE(one || two, "sparcon.", fn, ": centers ", centers.sizes(), " and widths ",
                    widths.sizes(), " must be (N) and (N) in 1D or (N, 2) and (N, 2, 2) in 2D");
}

template <class T>
std::vector<T> values_of(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU, c10::CppTypeToScalarType<T>::value).contiguous();
  return {c.data_ptr<T>(), c.data_ptr<T>() + c.numel()};
}

template <class T>
GaussianBasis1D<T> basis_1d(const at::Tensor& centers, const at::Tensor& widths) {
  return {values_of<T>(centers), values_of<T>(widths)};
}
template <class T>
GaussianBasis2D<T> basis_2d(const at::Tensor& centers, const at::Tensor& widths) {
  return {values_of<T>(centers), values_of<T>(widths)};
}

// One RidgeCache per (basis, lambda). At most kMaxBases are kept; past that the oldest goes
// (callers hold a shared_ptr for the duration of their call), so that a basis changed between
// calls cannot grow memory without bound.
constexpr std::size_t kMaxBases = 32;

template <class Basis>
std::shared_ptr<RidgeCache<Basis>> cached_ridge(const Basis& basis, typename Basis::Scalar lambda) {
  static std::mutex mutex;
  static std::map<std::vector<double>, std::shared_ptr<RidgeCache<Basis>>> caches;
  static std::vector<std::vector<double>> order;  // keys, oldest first
  std::vector<double> key(basis.centers.begin(), basis.centers.end());
  key.insert(key.end(), basis.widths.begin(), basis.widths.end());
  key.push_back(static_cast<double>(lambda));
  const std::lock_guard lock(mutex);
  auto found = caches.find(key);
  if (found != caches.end()) return found->second;
  if (caches.size() >= kMaxBases) {
    caches.erase(order.front());
    order.erase(order.begin());
  }
  order.push_back(key);
  return caches.emplace(key, core([&] { return std::make_shared<RidgeCache<Basis>>(basis, lambda); }))
      .first->second;
}

// Checks the basis and that values are (B, L, E) for a 1D one or (B, H, W, E) for a 2D one;
// returns whether the basis is 2D.
bool check_values_and_basis(const char* fn, const at::Tensor& values, const at::Tensor& centers,
                            const at::Tensor& widths, bool any_device = false) {
  check_basis_shapes(fn, centers, widths, any_device);
  check_float(values, fn, "values", any_device);
  const bool two = is_2d(centers);
  TORCH_CHECK_VALUE(values.dim() == (two ? 4 : 3), "sparcon.", fn, ": values must be ",
                    two ? "(B, H, W, E)" : "(B, L, E)", " for a ", two ? "2D" : "1D",
                    " basis, got shape ", values.sizes());
  return two;
}

// ---- densities ------------------------------------------------------------------------------

// mu and sigma in the compute dtype, contiguous; 2D sigma symmetrised.
struct Densities {
  at::Tensor mu, sigma;
  std::size_t batch;
};

Densities densities(const char* fn, const at::Tensor& mu, const at::Tensor& sigma, bool two_d,
                    at::ScalarType compute, bool any_device = false) {
  check_float(mu, fn, "mu", any_device);
  check_float(sigma, fn, "sigma", any_device);
  if (two_d) {
    TORCH_CHECK_VALUE(mu.dim() == 2 && mu.size(1) == 2, "sparcon.", fn, ": mu must be (B, 2), got ", mu.sizes());
    TORCH_CHECK_VALUE(sigma.dim() == 3 && sigma.size(0) == mu.size(0) && sigma.size(1) == 2 && sigma.size(2) == 2,
                      "sparcon.", fn, ": sigma must be (B, 2, 2) = (", mu.size(0), ", 2, 2), got ", sigma.sizes());
  } else {
    TORCH_CHECK_VALUE(mu.dim() == 1, "sparcon.", fn, ": mu must be (B), got ", mu.sizes());
    TORCH_CHECK_VALUE(sigma.dim() == 1 && sigma.size(0) == mu.size(0), "sparcon.", fn,
                      ": sigma must be (B) = (", mu.size(0), "), got ", sigma.sizes());
  }
  at::Tensor s = sigma.to(compute);
  if (two_d) s = 0.5 * (s + s.transpose(1, 2));
  return {mu.to(compute).contiguous(), s.contiguous(), static_cast<std::size_t>(mu.size(0))};
}

// ---- expectation ----------------------------------------------------------------------------

class Expectation : public ::torch::autograd::Function<Expectation> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& mu, const at::Tensor& sigma,
                            const at::Tensor& centers, const at::Tensor& widths, double alpha) {
    const char* fn = "continuous_expectation";
    check_basis_shapes(fn, centers, widths);
    const bool two = is_2d(centers);
    const at::ScalarType compute = compute_type(mu.scalar_type());
    const Densities d = densities(fn, mu, sigma, two, compute);
    at::Tensor r = at::empty({mu.size(0), centers.size(0)}, d.mu.options());
    with_type(compute, [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (two)
          expectation_2d<T>(static_cast<T>(alpha), const_span_of<T>(d.mu), const_span_of<T>(d.sigma),
                            basis_2d<T>(centers, widths), span_of<T>(r), threads());
        else
          expectation_1d<T>(static_cast<T>(alpha), const_span_of<T>(d.mu), const_span_of<T>(d.sigma),
                            basis_1d<T>(centers, widths), span_of<T>(r), threads());
      });
    });
    ctx->save_for_backward({d.mu, d.sigma, centers, widths});
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(mu.scalar_type());
    ctx->saved_data["sigma_dtype"] = static_cast<std::int64_t>(sigma.scalar_type());
    return r.to(mu.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &mu = saved[0], &sigma = saved[1], &centers = saved[2], &widths = saved[3];
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const at::Tensor g = grads[0].to(mu.scalar_type()).contiguous();
    at::Tensor dmu = at::empty_like(mu), dsigma = at::empty_like(sigma);
    with_type(mu.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (is_2d(centers))
          expectation_2d_backward<T>(static_cast<T>(alpha), const_span_of<T>(mu), const_span_of<T>(sigma),
                                     basis_2d<T>(centers, widths), const_span_of<T>(g), span_of<T>(dmu),
                                     span_of<T>(dsigma), {}, threads());
        else
          expectation_1d_backward<T>(static_cast<T>(alpha), const_span_of<T>(mu), const_span_of<T>(sigma),
                                     basis_1d<T>(centers, widths), const_span_of<T>(g), span_of<T>(dmu),
                                     span_of<T>(dsigma), {}, threads());
      });
    });
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    const auto sigma_dtype = static_cast<at::ScalarType>(ctx->saved_data["sigma_dtype"].toInt());
    return {dmu.to(dtype), dsigma.to(sigma_dtype), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// ---- attention ------------------------------------------------------------------------------

// Per-example lengths (1D): given, or the padded length.
at::Tensor lengths_of(const char* fn, const c10::optional<at::Tensor>& lengths, std::int64_t batch,
                      std::int64_t length) {
  if (!lengths.has_value() || !lengths->defined()) return at::full({batch}, length, at::kLong);
  TORCH_CHECK_VALUE(!at::isFloatingType(lengths->scalar_type()) && lengths->dim() == 1 &&
                        lengths->size(0) == batch,
                    "sparcon.", fn, ": lengths must be an integer tensor of shape (", batch, "), got ",
                    lengths->scalar_type(), " ", lengths->sizes());
  return lengths->to(at::kCPU, at::kLong).contiguous();  // read by the core, and on the host by the generic path
}

// The core's view of a (B, L, E) or (B, H, W, E) tensor.
SequenceShape sequence_shape(const at::Tensor& values) {
  return {static_cast<std::size_t>(values.size(0)), static_cast<std::size_t>(values.size(1)),
          static_cast<std::size_t>(values.size(2))};
}
ImageShape image_shape(const at::Tensor& values) {
  return {static_cast<std::size_t>(values.size(0)), static_cast<std::size_t>(values.size(1)),
          static_cast<std::size_t>(values.size(2)), static_cast<std::size_t>(values.size(3))};
}

class Attention : public ::torch::autograd::Function<Attention> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& values, const at::Tensor& mu,
                            const at::Tensor& sigma, const at::Tensor& centers,
                            const at::Tensor& widths, double lambda, double alpha,
                            const at::Tensor& lengths) {
    const char* fn = "continuous_attention";
    const bool two = check_values_and_basis(fn, values, centers, widths);
    const at::ScalarType compute = compute_type(values.scalar_type());
    const Densities d = densities(fn, mu, sigma, two, compute);
    TORCH_CHECK_VALUE(values.size(0) == mu.size(0), "sparcon.", fn, ": values has batch ",
                      values.size(0), " but mu has ", mu.size(0));
    const at::Tensor v = values.to(compute).contiguous();
    const std::int64_t e = values.size(-1);
    at::Tensor context = at::empty({values.size(0), e}, v.options());
    with_type(compute, [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (two) {
          const auto ridge = cached_ridge(basis_2d<T>(centers, widths), static_cast<T>(lambda));
          const ImageShape shape = image_shape(values);
          continuous_attention_2d<T>(static_cast<T>(alpha), *ridge, const_span_of<T>(v), shape,
                                     const_span_of<T>(d.mu), const_span_of<T>(d.sigma), span_of<T>(context), threads());
        } else {
          const auto ridge = cached_ridge(basis_1d<T>(centers, widths), static_cast<T>(lambda));
          const SequenceShape shape = sequence_shape(values);
          continuous_attention_1d<T>(static_cast<T>(alpha), *ridge, const_span_of<T>(v), shape,
                                     const_span_of<std::int64_t>(lengths), const_span_of<T>(d.mu),
                                     const_span_of<T>(d.sigma), span_of<T>(context), threads());
        }
      });
    });
    ctx->save_for_backward({v, d.mu, d.sigma, centers, widths, lengths});
    ctx->saved_data["lambda"] = lambda;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["dtypes"] = std::vector<std::int64_t>{static_cast<std::int64_t>(values.scalar_type()),
                                                          static_cast<std::int64_t>(mu.scalar_type()),
                                                          static_cast<std::int64_t>(sigma.scalar_type())};
    return context.to(values.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &v = saved[0], &mu = saved[1], &sigma = saved[2], &centers = saved[3],
                     &widths = saved[4], &lengths = saved[5];
    const double lambda = ctx->saved_data["lambda"].toDouble();
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const auto dtypes = ctx->saved_data["dtypes"].toIntVector();
    const at::Tensor dc = grads[0].to(v.scalar_type()).contiguous();
    at::Tensor dv = at::empty_like(v), dmu = at::empty_like(mu), dsigma = at::empty_like(sigma);
    with_type(v.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (is_2d(centers)) {
          const auto ridge = cached_ridge(basis_2d<T>(centers, widths), static_cast<T>(lambda));
          const ImageShape shape = image_shape(v);
          continuous_attention_2d_backward<T>(static_cast<T>(alpha), *ridge, const_span_of<T>(v), shape,
                                              const_span_of<T>(mu), const_span_of<T>(sigma), const_span_of<T>(dc),
                                              span_of<T>(dv), span_of<T>(dmu), span_of<T>(dsigma), threads());
        } else {
          const auto ridge = cached_ridge(basis_1d<T>(centers, widths), static_cast<T>(lambda));
          const SequenceShape shape = sequence_shape(v);
          continuous_attention_1d_backward<T>(static_cast<T>(alpha), *ridge, const_span_of<T>(v), shape,
                                              const_span_of<std::int64_t>(lengths), const_span_of<T>(mu),
                                              const_span_of<T>(sigma), const_span_of<T>(dc), span_of<T>(dv),
                                              span_of<T>(dmu), span_of<T>(dsigma), threads());
        }
      });
    });
    return {dv.to(static_cast<at::ScalarType>(dtypes[0])), dmu.to(static_cast<at::ScalarType>(dtypes[1])),
            dsigma.to(static_cast<at::ScalarType>(dtypes[2])), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor()};
  }
};

// ---- value model ----------------------------------------------------------------------------

class ValueModel : public ::torch::autograd::Function<ValueModel> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& values, const at::Tensor& centers,
                            const at::Tensor& widths, double lambda, const at::Tensor& lengths) {
    const char* fn = "value_model";
    const bool two = check_values_and_basis(fn, values, centers, widths);
    const at::ScalarType compute = compute_type(values.scalar_type());
    const at::Tensor v = values.to(compute).contiguous();
    const std::int64_t b = values.size(0), e = values.size(-1);
    at::Tensor model = at::empty({b, centers.size(0), e}, v.options());
    with_type(compute, [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (two) {
          const auto ridge = cached_ridge(basis_2d<T>(centers, widths), static_cast<T>(lambda));
          value_model_2d<T>(*ridge, const_span_of<T>(v), image_shape(values), span_of<T>(model), threads());
        } else {
          const auto ridge = cached_ridge(basis_1d<T>(centers, widths), static_cast<T>(lambda));
          value_model_1d<T>(*ridge, const_span_of<T>(v), sequence_shape(values), const_span_of<std::int64_t>(lengths),
                            span_of<T>(model), threads());
        }
      });
    });
    ctx->save_for_backward({centers, widths, lengths});
    ctx->saved_data["lambda"] = lambda;
    ctx->saved_data["shape"] = values.sizes().vec();
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(values.scalar_type());
    return model.to(values.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &centers = saved[0], &widths = saved[1], &lengths = saved[2];
    const double lambda = ctx->saved_data["lambda"].toDouble();
    const auto shape = ctx->saved_data["shape"].toIntVector();
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    const at::Tensor dmodel = grads[0].to(compute_type(dtype)).contiguous();
    at::Tensor dvalues = at::empty(shape, dmodel.options());
    with_type(dmodel.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (is_2d(centers)) {
          const auto ridge = cached_ridge(basis_2d<T>(centers, widths), static_cast<T>(lambda));
          value_model_2d_backward<T>(*ridge, image_shape(dvalues), const_span_of<T>(dmodel), span_of<T>(dvalues),
                                     threads());
        } else {
          const auto ridge = cached_ridge(basis_1d<T>(centers, widths), static_cast<T>(lambda));
          value_model_1d_backward<T>(*ridge, sequence_shape(dvalues), const_span_of<std::int64_t>(lengths),
                                     const_span_of<T>(dmodel), span_of<T>(dvalues), threads());
        }
      });
    });
    return {dvalues.to(dtype), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// ---- disc+cont ------------------------------------------------------------------------------

class Moments : public ::torch::autograd::Function<Moments> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& p, double alpha, double ridge,
                               const at::Tensor& lengths) {
    const char* fn = "density_from_moments";
    check_floating(p, fn, "p");
    TORCH_CHECK_VALUE(p.dim() == 2 || p.dim() == 3, "sparcon.", fn,
                      ": p must be (B, L) or (B, H, W), got shape ", p.sizes());
    const bool two = p.dim() == 3;
    const at::Tensor q = p.to(compute_type(p.scalar_type())).contiguous();
    const std::int64_t batch = p.size(0);
    at::Tensor mu = two ? at::empty({batch, 2}, q.options()) : at::empty({batch}, q.options());
    at::Tensor sigma = two ? at::empty({batch, 2, 2}, q.options()) : at::empty({batch}, q.options());
    with_type(q.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (two)
          density_from_moments_2d<T>(static_cast<T>(alpha), const_span_of<T>(q), static_cast<std::size_t>(batch),
                                     {static_cast<std::size_t>(p.size(1)), static_cast<std::size_t>(p.size(2))},
                                     static_cast<T>(ridge), span_of<T>(mu), span_of<T>(sigma));
        else
          density_from_moments_1d<T>(static_cast<T>(alpha), const_span_of<T>(q), static_cast<std::size_t>(p.size(1)),
                                     const_span_of<std::int64_t>(lengths), static_cast<T>(ridge), span_of<T>(mu),
                                     span_of<T>(sigma));
      });
    });
    ctx->save_for_backward({q, lengths});
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["ridge"] = ridge;
    ctx->saved_data["dtype"] = static_cast<std::int64_t>(p.scalar_type());
    return {mu.to(p.scalar_type()), sigma.to(p.scalar_type())};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &lengths = saved[1];
    const double alpha = ctx->saved_data["alpha"].toDouble(), ridge = ctx->saved_data["ridge"].toDouble();
    const bool two = q.dim() == 3;
    auto grad_or_zero = [&](std::size_t i, at::IntArrayRef shape) {
      return grads[i].defined() ? grads[i].to(q.scalar_type()).contiguous() : at::zeros(shape, q.options());
    };
    const std::int64_t batch = q.size(0);
    const at::Tensor dmu = grad_or_zero(0, two ? at::IntArrayRef{batch, 2} : at::IntArrayRef{batch});
    const at::Tensor dsigma = grad_or_zero(1, two ? at::IntArrayRef{batch, 2, 2} : at::IntArrayRef{batch});
    at::Tensor dp = at::empty_like(q);
    with_type(q.scalar_type(), [&](auto t) {
      using T = decltype(t);
      core([&] {
        if (two)
          density_from_moments_2d_backward<T>(static_cast<T>(alpha), const_span_of<T>(q), static_cast<std::size_t>(batch),
                                              {static_cast<std::size_t>(q.size(1)), static_cast<std::size_t>(q.size(2))},
                                              static_cast<T>(ridge), const_span_of<T>(dmu), const_span_of<T>(dsigma),
                                              span_of<T>(dp));
        else
          density_from_moments_1d_backward<T>(static_cast<T>(alpha), const_span_of<T>(q), static_cast<std::size_t>(q.size(1)),
                                              const_span_of<std::int64_t>(lengths), static_cast<T>(ridge),
                                              const_span_of<T>(dmu), const_span_of<T>(dsigma), span_of<T>(dp));
      });
    });
    return {dp.to(static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt())), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// ---- the generic kernels (backend.h, generic/) --------------------------------------------------
//
// Every case has one: the 1D and 2D expectations for every alpha, and the attention ops built on
// them (value model, continuous attention, moments). Checks: the shapes as above; the numbers
// (alpha, lambda, ridge, the basis) by the core on the host with no examples (the basis is
// small); the data (mu, sigma, lengths, the moments) on the device, one synchronisation, and
// when that fails the core reruns the call on host copies so that the message is the core's.

bool all_true(const at::Tensor& t) { return t.all().item<bool>(); }

// mu and sigma finite, sigma positive (definite), on the device.
bool densities_valid(const Densities& d, bool two_d) {
  if (!two_d) return all_true(at::isfinite(d.mu) & at::isfinite(d.sigma) & (d.sigma > 0));
  const at::Tensor s00 = d.sigma.select(1, 0).select(1, 0), s11 = d.sigma.select(1, 1).select(1, 1),
                   s01 = d.sigma.select(1, 0).select(1, 1);
  return all_true(at::isfinite(d.mu).all(1) & at::isfinite(d.sigma).flatten(1).all(1) & (s00 > 0) &
                  (s00 * s11 - s01 * s01 > 0));
}

// alpha and the basis checked by the core (expectation with no examples), on host copies.
void check_alpha_and_basis(double alpha, const at::Tensor& centers, const at::Tensor& widths, bool two_d,
                           at::ScalarType compute) {
  with_type(compute, [&](auto t) {
    using T = decltype(t);
    core([&] {
      if (two_d)
        expectation_2d<T>(static_cast<T>(alpha), {}, {}, basis_2d<T>(centers, widths), {}, threads());
      else
        expectation_1d<T>(static_cast<T>(alpha), {}, {}, basis_1d<T>(centers, widths), {}, threads());
    });
  });
}

bool any_meta(std::initializer_list<at::Tensor> tensors) {
  for (const at::Tensor& t : tensors)
    if (t.defined() && t.is_meta()) return true;
  return false;
}

// r = E_p[psi] by the generic kernel, with autograd: the partial derivatives are computed with r
// and saved, so that the backward is dmu = sum_j g_j dr_j/dmu, dsigma = sum_j g_j dr_j/dsigma
// (continuous.h's vector-Jacobian products).
class GenericExpectation : public ::torch::autograd::Function<GenericExpectation> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& mu, const at::Tensor& sigma,
                            const at::Tensor& centers, const at::Tensor& widths, double alpha) {
    const bool two = is_2d(centers);
    const Densities d = densities("continuous_expectation", mu, sigma, two, compute_type(mu.scalar_type()), true);
    const generic::ExpectationParts parts = two ? generic::expectation_2d(alpha, d.mu, d.sigma, centers, widths)
                                                : generic::expectation_1d(alpha, d.mu, d.sigma, centers, widths);
    ctx->save_for_backward({parts.dr_dmu, parts.dr_dsigma});
    ctx->saved_data["dtypes"] = std::vector<std::int64_t>{static_cast<std::int64_t>(mu.scalar_type()),
                                                          static_cast<std::int64_t>(sigma.scalar_type())};
    return parts.r.to(compute_type(mu.scalar_type())).to(mu.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &dr_dmu = saved[0], &dr_dsigma = saved[1];
    const auto dtypes = ctx->saved_data["dtypes"].toIntVector();
    const at::Tensor g = grads[0].to(dr_dmu.scalar_type());
    at::Tensor dmu, dsigma;
    if (dr_dmu.dim() == 2) {
      dmu = (g * dr_dmu).sum(1);
      dsigma = (g * dr_dsigma).sum(1);
    } else {
      dmu = (g.unsqueeze(-1) * dr_dmu).sum(1);
      dsigma = (g.unsqueeze(-1).unsqueeze(-1) * dr_dsigma).sum(1);
    }
    return {dmu.to(static_cast<at::ScalarType>(dtypes[0])), dsigma.to(static_cast<at::ScalarType>(dtypes[1])),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor generic_expectation(const at::Tensor& mu, const at::Tensor& sigma, const at::Tensor& centers,
                               const at::Tensor& widths, double alpha) {
  const char* fn = "continuous_expectation";
  check_basis_shapes(fn, centers, widths, true);
  const bool two = is_2d(centers);
  const at::ScalarType compute = compute_type(mu.scalar_type());
  const Densities d = densities(fn, mu, sigma, two, compute, true);
  check_same_device(mu, sigma, fn, "mu", "sigma");
  if (!any_meta({mu, sigma, centers, widths})) {
    check_alpha_and_basis(alpha, centers, widths, two, compute);
    if (!densities_valid(d, two)) {
      const CoreScope scope;  // the core's message
      continuous_expectation(mu.detach().cpu(), sigma.detach().cpu(), centers.cpu(), widths.cpu(), alpha);
    }
  }
  return GenericExpectation::apply(mu, sigma, centers, widths, alpha);
}

// G of the basis on the device: (B, L, N) with the rows of each example's own length and zeros
// past it (1D), or (H W, N) (2D); computed by the core's RidgeCache on the host, once per grid.
at::Tensor device_ridge(const at::Tensor& centers, const at::Tensor& widths, double lambda, const at::Tensor& values,
                        const at::Tensor& lengths_host, at::ScalarType compute) {
  const bool two = is_2d(centers);
  return with_type(compute, [&](auto t) {
    using T = decltype(t);
    const auto host = at::TensorOptions().dtype(c10::CppTypeToScalarType<T>::value);
    const std::int64_t n = centers.size(0);
    if (two) {
      const auto ridge = cached_ridge(basis_2d<T>(centers, widths), static_cast<T>(lambda));
      const std::vector<T>& g = core([&] {
        return std::cref(ridge->matrix({static_cast<std::size_t>(values.size(1)), static_cast<std::size_t>(values.size(2))}));
      }).get();
      return at::tensor(at::ArrayRef<T>(g), host).reshape({values.size(1) * values.size(2), n}).to(values.device());
    }
    const auto ridge = cached_ridge(basis_1d<T>(centers, widths), static_cast<T>(lambda));
    const std::int64_t L = values.size(1);
    const auto [unique, inverse] = at::_unique(lengths_host, true, true);
    at::Tensor table = at::zeros({unique.numel(), L, n}, host);
    for (std::int64_t u = 0; u < unique.numel(); ++u) {
      const std::int64_t length = unique[u].item<std::int64_t>();
      const std::vector<T>& g = core([&] { return std::cref(ridge->matrix(static_cast<std::size_t>(length))); }).get();
      table[u].narrow(0, 0, length).copy_(at::tensor(at::ArrayRef<T>(g), host).reshape({length, n}));
    }
    return table.to(values.device()).index_select(0, inverse.to(values.device()));
  });
}

// values (B, L, E) with the padding rows (l >= L_b) zero, so that NaN or inf padding cannot reach
// the context through 0 * NaN (the rows of G past L_b are zero); the gradient there is zero too.
at::Tensor without_padding(const at::Tensor& v, const at::Tensor& lengths_host) {
  const at::Tensor lengths = lengths_host.to(v.device()).unsqueeze(1);
  const at::Tensor inside = at::arange(v.size(1), lengths.options()).unsqueeze(0) < lengths;
  return at::where(inside.unsqueeze(-1), v, at::zeros_like(v));
}

// Whether the lengths (host, int64) are in [1, L].
bool lengths_valid(const at::Tensor& lengths_host, std::int64_t length) {
  return lengths_host.numel() == 0 || all_true((lengths_host >= 1) & (lengths_host <= length));
}

at::Tensor generic_attention(const at::Tensor& values, const at::Tensor& mu, const at::Tensor& sigma,
                             const at::Tensor& centers, const at::Tensor& widths, double lambda, double alpha,
                             const at::Tensor& lengths_host) {
  const char* fn = "continuous_attention";
  const bool two = check_values_and_basis(fn, values, centers, widths, true);
  const at::ScalarType compute = compute_type(values.scalar_type());
  const Densities d = densities(fn, mu, sigma, two, compute, true);
  TORCH_CHECK_VALUE(values.size(0) == mu.size(0), "sparcon.", fn, ": values has batch ", values.size(0),
                    " but mu has ", mu.size(0));
  check_same_device(values, mu, fn, "values", "mu");
  check_same_device(values, sigma, fn, "values", "sigma");
  if (any_meta({values, mu, sigma, centers, widths})) return at::empty({values.size(0), values.size(-1)}, values.options());
  check_alpha_and_basis(alpha, centers, widths, two, compute);
  if (!densities_valid(d, two) || (!two && !lengths_valid(lengths_host, values.size(1)))) {
    const CoreScope scope;  // the core's message
    continuous_attention(values.detach().cpu(), mu.detach().cpu(), sigma.detach().cpu(), centers.cpu(), widths.cpu(),
                         lambda, alpha, two ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(lengths_host));
  }
  const at::Tensor g = device_ridge(centers, widths, lambda, values, lengths_host, compute);
  const at::Tensor r = generic_expectation(mu, sigma, centers, widths, alpha).to(compute);
  const at::Tensor v = two ? values.to(compute).flatten(1, 2) : without_padding(values.to(compute), lengths_host);
  return generic::attention_context(v, g, r).to(values.scalar_type());
}

at::Tensor generic_value_model(const at::Tensor& values, const at::Tensor& centers, const at::Tensor& widths,
                               double lambda, const at::Tensor& lengths_host) {
  const char* fn = "value_model";
  const bool two = check_values_and_basis(fn, values, centers, widths, true);
  const at::ScalarType compute = compute_type(values.scalar_type());
  if (any_meta({values, centers, widths}))
    return at::empty({values.size(0), centers.size(0), values.size(-1)}, values.options());
  if (!two && !lengths_valid(lengths_host, values.size(1))) {
    const CoreScope scope;
    value_model(values.detach().cpu(), centers.cpu(), widths.cpu(), lambda, lengths_host);
  }
  const at::Tensor g = device_ridge(centers, widths, lambda, values, lengths_host, compute);
  const at::Tensor v = two ? values.to(compute).flatten(1, 2) : without_padding(values.to(compute), lengths_host);
  return generic::value_model(v, g).to(values.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> generic_moments(const at::Tensor& p, double alpha, double ridge,
                                                   const at::Tensor& lengths_host) {
  const char* fn = "density_from_moments";
  check_floating_any_device(p, fn, "p");
  TORCH_CHECK_VALUE(p.dim() == 2 || p.dim() == 3, "sparcon.", fn, ": p must be (B, L) or (B, H, W), got shape ",
                    p.sizes());
  const bool two = p.dim() == 3;
  const at::Tensor q = p.to(compute_type(p.scalar_type()));
  auto [mu, sigma, c] = two ? generic::moments_2d(q, alpha, ridge)
                            : generic::moments_1d(q, lengths_host.to(p.device()), alpha, ridge);
  if (!p.is_meta()) {
    const bool numbers = alpha >= 1 && std::isfinite(alpha) && ridge >= 0 && std::isfinite(ridge);
    bool valid = numbers && (two || lengths_valid(lengths_host, p.size(1)));
    if (valid && two) {
      const at::Tensor c00 = c.select(1, 0).select(1, 0);
      valid = all_true((c00 > 0) & (c00 * c.select(1, 1).select(1, 1) - c.select(1, 0).select(1, 1).square() > 0));
    } else if (valid) {
      valid = all_true(c > 0);
    }
    if (!valid) {
      const CoreScope scope;  // the core's message
      density_from_moments(p.detach().cpu(), alpha, ridge, two ? c10::optional<at::Tensor>() : c10::optional<at::Tensor>(lengths_host));
    }
  }
  return {mu.to(p.scalar_type()), sigma.to(p.scalar_type())};
}

}  // namespace
}  // namespace detail

at::Tensor continuous_expectation(const at::Tensor& mu, const at::Tensor& sigma,
                                  const at::Tensor& centers, const at::Tensor& widths, double alpha) {
  if (detail::use_generic(mu)) return detail::generic_expectation(mu, sigma, centers, widths, alpha);
  return detail::Expectation::apply(mu, sigma, centers, widths, alpha);
}

at::Tensor ridge_matrix(const at::Tensor& centers, const at::Tensor& widths, at::IntArrayRef grid,
                        double lambda) {
  const char* fn = "ridge_matrix";
  detail::check_basis_shapes(fn, centers, widths);
  const bool two = detail::is_2d(centers);
  TORCH_CHECK_VALUE(grid.size() == (two ? 2u : 1u), "sparcon.", fn, ": grid = ", grid, " must be ",
                    two ? "[height, width] for a 2D basis" : "[length] for a 1D basis");
  for (const auto g : grid) TORCH_CHECK_VALUE(g > 0, "sparcon.", fn, ": grid = ", grid, " must be positive");
  const at::ScalarType compute = detail::compute_type(centers.scalar_type());
  return detail::with_type(compute, [&](auto t) {
    using T = decltype(t);
    const std::vector<T> g = detail::core([&] {
      if (two)
        return ridge_matrix_2d<T>(detail::basis_2d<T>(centers, widths),
                                  {static_cast<std::size_t>(grid[0]), static_cast<std::size_t>(grid[1])},
                                  static_cast<T>(lambda));
      return ridge_matrix_1d<T>(detail::basis_1d<T>(centers, widths), static_cast<std::size_t>(grid[0]),
                                static_cast<T>(lambda));
    });
    const std::int64_t rows = two ? grid[0] * grid[1] : grid[0];
    return at::tensor(at::ArrayRef<T>(g)).reshape({rows, centers.size(0)}).to(centers.scalar_type());
  });
}

at::Tensor continuous_attention(const at::Tensor& values, const at::Tensor& mu, const at::Tensor& sigma,
                                const at::Tensor& centers, const at::Tensor& widths, double lambda,
                                double alpha, const c10::optional<at::Tensor>& lengths) {
  // (an empty tensor for images: torch 1.13's autograd::Function cannot take undefined tensors)
  const at::Tensor l = values.dim() == 3
                           ? detail::lengths_of("continuous_attention", lengths, values.size(0), values.size(1))
                           : at::empty({0}, at::kLong);
  if (detail::use_generic(values))
    return detail::generic_attention(values, mu, sigma, centers, widths, lambda, alpha, l);
  return detail::Attention::apply(values, mu, sigma, centers, widths, lambda, alpha, l);
}

at::Tensor value_model(const at::Tensor& values, const at::Tensor& centers, const at::Tensor& widths, double lambda,
                       const c10::optional<at::Tensor>& lengths) {
  const at::Tensor l = values.dim() == 3 ? detail::lengths_of("value_model", lengths, values.size(0), values.size(1))
                                         : at::empty({0}, at::kLong);
  if (detail::use_generic(values)) return detail::generic_value_model(values, centers, widths, lambda, l);
  return detail::ValueModel::apply(values, centers, widths, lambda, l);
}

std::tuple<at::Tensor, at::Tensor> density_from_moments(const at::Tensor& p, double alpha, double ridge,
                                                        const c10::optional<at::Tensor>& lengths) {
  const at::Tensor l = p.dim() == 2 ? detail::lengths_of("density_from_moments", lengths, p.size(0), p.size(1))
                                    : at::empty({0}, at::kLong);
  if (detail::use_generic(p)) return detail::generic_moments(p, alpha, ridge, l);
  const auto out = detail::Moments::apply(p, alpha, ridge, l);
  return {out[0], out[1]};
}

}  // namespace sparcon::torch
