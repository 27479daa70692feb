// The C API's library, error and context calls (include/radixmesh/radixmesh.h).
#include <memory>

#include "capi/c_api_support.hpp"

namespace radixmesh::capi {
namespace {
thread_local std::string last_error;
}  // namespace

void set_last_error(const std::string& message) { last_error = message; }
void clear_last_error() { last_error.clear(); }

Context& context_of(rxm_context* c) {
  require(c != nullptr, "the context is NULL", "create one with rxm_context_create_cpu or rxm_context_create_local");
  return c->ctx;
}

KeyType key_type_of(rxm_key_type t) {
  const int v = static_cast<int>(t);
  require(v >= RXM_U8 && v <= RXM_F64, "key type " + std::to_string(v) + " is not an rxm_key_type",
          "pass RXM_U8 ... RXM_F64");
  return static_cast<KeyType>(v);
}

namespace {
template <class Make> rxm_status make_context(rxm_context** out, Make&& make) {
  return guarded([&] {
    require(out != nullptr, "the output pointer is NULL", "pass the address of an rxm_context*");
    *out = nullptr;
    auto c = std::make_unique<rxm_context>(rxm_context{make()});
    *out = c.release();
  });
}
}  // namespace

}  // namespace radixmesh::capi

namespace rc = radixmesh::capi;
using radixmesh::Context;

extern "C" {

int rxm_c_api_version(void) { return RXM_C_API_VERSION; }
const char* rxm_version(void) { return RXM_VERSION_TEXT; }
const char* rxm_last_error(void) { return rc::last_error.c_str(); }

size_t rxm_key_type_size(rxm_key_type type) {
  const int v = static_cast<int>(type);
  return v >= RXM_U8 && v <= RXM_F64 ? radixmesh::size_of(static_cast<radixmesh::KeyType>(v)) : 0;
}

rxm_status rxm_context_create_cpu(unsigned threads, rxm_context** out) {
  return rc::make_context(out, [&] { return Context::cpu(threads); });
}

rxm_status rxm_context_create_local(const int* devices, size_t count, rxm_backend backend, rxm_context** out) {
  return rc::make_context(out, [&] {
    radixmesh::require(count == 0 || devices != nullptr, "devices is NULL with count " + std::to_string(count),
                       "pass count device ordinals, or count 0 for every visible GPU");
    radixmesh::require(backend >= RXM_BACKEND_AUTO && backend <= RXM_BACKEND_CUDA,
                       "backend " + std::to_string(int(backend)) + " is not an rxm_backend",
                       "pass RXM_BACKEND_AUTO, RXM_BACKEND_CPU or RXM_BACKEND_CUDA");
    return Context::local(std::vector<int>(devices, devices + count), static_cast<radixmesh::Backend>(backend));
  });
}

rxm_status rxm_context_create_cpu_mesh(unsigned n, unsigned threads_per_device, rxm_context** out) {
  return rc::make_context(out, [&] { return Context::cpu_mesh(n, threads_per_device); });
}

void rxm_context_destroy(rxm_context* ctx) { delete ctx; }

int rxm_context_mesh_size(const rxm_context* ctx) { return ctx ? ctx->ctx.mesh_size() : 0; }
int rxm_context_local_count(const rxm_context* ctx) { return ctx ? ctx->ctx.local_mesh_devices().count : 0; }
rxm_backend rxm_context_backend(const rxm_context* ctx) {
  return ctx ? static_cast<rxm_backend>(ctx->ctx.backend()) : RXM_BACKEND_AUTO;
}

}  // extern "C"
