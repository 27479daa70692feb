// temporary_registry.hpp — the named temporary files that exist right now, kept where a signal
// handler can read them: a fixed array of slots, each a state word (std::atomic, lock-free) and a
// path buffer, so that unlink_registered_temporaries() does nothing a handler may not (no locks,
// no allocation: only atomic loads and unlink(2)).
#pragma once

namespace radixmesh::io_detail {

// Records `path` (NUL-terminated, shorter than PATH_MAX) and returns its slot, or -1 when every
// slot is taken or the path is too long; such a file is still removed by its owner on every
// error, only not by a signal handler.
int register_temporary(const char* path) noexcept;
// Forgets the slot (the owner renamed or removed the file). A slot of -1 is ignored.
void unregister_temporary(int slot) noexcept;
// Unlinks every registered path. Async-signal-safe.
void unlink_registered_temporaries() noexcept;

}  // namespace radixmesh::io_detail
