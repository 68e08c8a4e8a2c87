// A deterministic parallel loop over independent work items (latent columns,
// chains) for the engine core, which does not include RcppParallel itself.
// body(i) must touch only item i's data and must not call the R API. Exceptions
// thrown by body are caught in the worker and rethrown on the calling thread
// (the first one by item index, so the error does not depend on scheduling).
#ifndef AUGP_PARALLEL_H
#define AUGP_PARALLEL_H

#include <functional>

namespace augp {

void parallel_items(int count, int threads, const std::function<void(int)>& body);

// Threads worth using for `count` items of about n x n x n flops each: starting
// worker threads costs far more than a small Cholesky (the tinythread backend
// starts them anew for every loop), so small problems stay on one thread.
inline int threads_for_cubic(int count, int n, int threads) {
  if (count < 2 || threads < 2) return 1;
  return n >= 150 ? threads : 1;
}

}  // namespace augp

#endif
