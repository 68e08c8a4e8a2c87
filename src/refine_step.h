// The step-size rule shared by the natural-gradient refinements of q(f) and q(u)
// (cvi_refine in cavi.cpp, sparse_cvi_refine in sparse.cpp).
#ifndef AUGP_REFINE_STEP_H
#define AUGP_REFINE_STEP_H

#include <cmath>

namespace augp {

// The step of the next refinement round (cvi_refine, sparse_cvi_refine) after a round
// accepted at step rate * 2^-halvings: a round accepted at its first try doubles the step
// (at most 1, the full natural-gradient step), one that needed halvings keeps the step it
// was accepted at. Steps near the optimum of D are then as long as D allows, and a long
// step that overshoots costs one halving, not the refinement.
inline double next_rate(double rate, int halvings) {
  if (halvings <= 0) return rate * 2.0 < 1.0 ? rate * 2.0 : 1.0;
  return std::ldexp(rate, -halvings);
}

}  // namespace augp

#endif
