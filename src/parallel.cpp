// parallel_items() on RcppParallel (TBB where available, tinythread otherwise).
#include <RcppParallel.h>

#include <exception>
#include <stdexcept>
#include <vector>

#include "parallel.h"

namespace augp {

namespace {

struct ItemWorker : public RcppParallel::Worker {
  const std::function<void(int)>& body;
  std::vector<std::exception_ptr>& errors;
  ItemWorker(const std::function<void(int)>& b, std::vector<std::exception_ptr>& e)
      : body(b), errors(e) {}
  void operator()(std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      try {
        body(static_cast<int>(i));
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  }
};

}  // namespace

void parallel_items(int count, int threads, const std::function<void(int)>& body) {
  if (count <= 0) return;
  std::vector<std::exception_ptr> errors(count);
  if (threads <= 1 || count == 1) {
    for (int i = 0; i < count; ++i) {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  } else {
    ItemWorker w(body, errors);
    RcppParallel::parallelFor(0, count, w, 1, threads);
  }
  for (int i = 0; i < count; ++i)
    if (errors[i]) std::rethrow_exception(errors[i]);
}

}  // namespace augp
