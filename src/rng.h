// Random number streams for the C++ core.
//
// Every parallel section gives each *block of work* (not each thread) its own
// stream, derived from a 64-bit base seed drawn from R's RNG on the main thread
// and the block's index. Results therefore depend on set.seed() and never on the
// number of threads. Nothing here touches the R API.
#ifndef AUGP_RNG_H
#define AUGP_RNG_H

#include <cstdint>
#include <cmath>
#include <limits>

namespace augp {

// splitmix64: used only to expand (seed, stream) into a full generator state.
inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256** generator with helpers for the continuous draws the samplers need.
class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = seed ^ (0xD1B54A32D192ED03ULL * (stream + 1));
    for (int i = 0; i < 4; ++i) s_[i] = splitmix64(x);
    has_spare_ = false;
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on the open interval (0, 1): never returns 0 or 1, so logs are safe.
  double unif() {
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }

  double exp1() { return -std::log(unif()); }

  // Standard normal by the polar method (the spare value is cached).
  double norm() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * unif() - 1.0;
      v = 2.0 * unif() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double m = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * m;
    has_spare_ = true;
    return u * m;
  }

  // Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 through the power trick.
  double gamma(double shape) {
    if (shape < 1.0) {
      const double g = gamma(shape + 1.0);
      return g * std::exp(std::log(unif()) / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = norm();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = unif();
      const double x2 = x * x;
      if (u < 1.0 - 0.0331 * x2 * x2) return d * v;
      if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
    }
  }

  // Poisson(mean) : inversion for small means, PTRS-style rejection otherwise.
  double poisson(double mu) {
    if (mu <= 0.0) return 0.0;
    if (mu < 12.0) {
      const double L = std::exp(-mu);
      double k = 0.0, p = unif();
      while (p > L) {
        k += 1.0;
        p *= unif();
      }
      return k;
    }
    // Transformed rejection with squeeze (Hormann 1993).
    const double slam = std::sqrt(mu);
    const double loglam = std::log(mu);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    const double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
      const double U = unif() - 0.5;
      const double V = unif();
      const double us = 0.5 - std::fabs(U);
      const double k = std::floor((2.0 * a / us + b) * U + mu + 0.43);
      if (us >= 0.07 && V <= vr) return k;
      if (k < 0.0 || (us < 0.013 && V > us)) continue;
      if (std::log(V) + std::log(invalpha) - std::log(a / (us * us) + b) <=
          -mu + k * loglam - std::lgamma(k + 1.0))
        return k;
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
  }
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_;
};

// Combine the two 31-bit integers R hands over into one 64-bit base seed.
inline std::uint64_t combine_seed(double a, double b) {
  std::uint64_t hi = static_cast<std::uint64_t>(a);
  std::uint64_t lo = static_cast<std::uint64_t>(b);
  std::uint64_t x = (hi << 32) ^ lo;
  return splitmix64(x);
}

}  // namespace augp

#endif
