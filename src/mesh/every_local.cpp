#include "mesh/every_local.hpp"

#include <exception>
#include <thread>
#include <vector>

namespace radixmesh::mesh {

void on_every_local(DeviceBackend& backend, LocalErrors& errors, int first, int locals,
                    const std::function<void(int)>& step) {
  if (locals <= 1 || !backend.concurrent_local_calls() || errors.any()) {
    for (int i = 0; i < locals; ++i) errors.run(first + i, [&] { step(i); });
    return;
  }
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(locals));
  std::vector<std::thread> threads;
  for (int i = 0; i < locals; ++i)
    threads.emplace_back([&, i] {
      try {
        step(i);
      } catch (...) {
        failed[std::size_t(i)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < locals; ++i)
    errors.run(first + i, [&] {
      if (failed[std::size_t(i)]) std::rethrow_exception(failed[std::size_t(i)]);
    });
}

}  // namespace radixmesh::mesh
