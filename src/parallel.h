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

}  // namespace augp

#endif
