#include "io/temporary_registry.hpp"

#include <limits.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace radixmesh::io_detail {
namespace {

// More outputs in flight at once than any command writes (the CLI writes at most three).
constexpr int slot_count = 64;

enum SlotState : int { free_slot = 0, being_written = 1, live = 2 };

struct Slot {
  std::atomic<int> state{free_slot};
  char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler reads the slot states");

Slot slots[slot_count];

}  // namespace

int register_temporary(const char* path) noexcept {
  const std::size_t length = std::strlen(path);
  if (length >= PATH_MAX) return -1;
  for (int i = 0; i < slot_count; ++i) {
    int expected = free_slot;
    if (!slots[i].state.compare_exchange_strong(expected, being_written)) continue;
    std::memcpy(slots[i].path, path, length + 1);
    slots[i].state.store(live, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) noexcept {
  if (slot >= 0 && slot < slot_count) slots[slot].state.store(free_slot, std::memory_order_release);
}

void unlink_registered_temporaries() noexcept {
  for (Slot& slot : slots)
    if (slot.state.load(std::memory_order_acquire) == live) ::unlink(slot.path);
}

}  // namespace radixmesh::io_detail
