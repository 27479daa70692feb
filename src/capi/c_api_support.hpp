// What every C entry point shares: the context handle, the thread's last error, and the guard that
// turns a C++ exception into an rxm_status and a message (nothing escapes into C).
#pragma once
#include <cstring>
#include <new>
#include <string>

#include "radixmesh/context.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/radixmesh.h"

struct rxm_context {
  radixmesh::Context ctx;
};

namespace radixmesh::capi {

void set_last_error(const std::string& message);
void clear_last_error();

// Runs body(); returns RXM_OK, or the status of what it threw with the message kept for
// rxm_last_error().
template <class Body> rxm_status guarded(Body&& body) {
  try {
    clear_last_error();
    body();
    return RXM_OK;
  } catch (const Error& e) {
    set_last_error(e.what());
    return static_cast<rxm_status>(static_cast<int>(e.code()));
  } catch (const std::bad_alloc&) {
    set_last_error("out of host memory. fix: use smaller inputs, or free memory");
    return RXM_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what() + ". fix: report this as a bug");
    return RXM_INTERNAL;
  } catch (...) {
    set_last_error("internal error: an unknown exception. fix: report this as a bug");
    return RXM_INTERNAL;
  }
}

// The caller's options over the defaults: the first min(given->size, sizeof(T)) bytes; the rest
// keep their defaults. NULL gives the defaults.
template <class T> T options_or_defaults(const T* given, const T& defaults, const char* name) {
  T o = defaults;
  if (!given) return o;
  require(given->size >= sizeof(std::size_t),
          std::string(name) + ".size is " + std::to_string(given->size),
          std::string("initialise it with the ") + name + " INIT macro, or set size to sizeof the struct");
  std::memcpy(&o, given, given->size < sizeof(T) ? given->size : sizeof(T));
  o.size = sizeof(T);
  return o;
}

Context& context_of(rxm_context* c);
KeyType key_type_of(rxm_key_type t);  // checked: an out-of-range value is an error

}  // namespace radixmesh::capi
