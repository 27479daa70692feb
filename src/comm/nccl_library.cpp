#include "comm/nccl_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

#include "radixmesh/error.hpp"

namespace radixmesh::comm {

namespace {

struct Loaded {
  NcclLibrary library;
  std::string error;  // why it did not load
};

Loaded load() {
  Loaded out;
  const char* path = std::getenv("RXM_NCCL_LIBRARY");
  const std::string tried = path ? path : "libnccl.so.2";
  void* handle = dlopen(tried.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    out.error = "NCCL could not be loaded from " + tried + " (" + dlerror() + ")";
    return out;
  }
  NcclLibrary& l = out.library;
  bool complete = true;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    complete = complete && fn != nullptr;
  };
  sym(l.get_unique_id, "ncclGetUniqueId");
  sym(l.comm_init_rank, "ncclCommInitRank");
  sym(l.comm_init_all, "ncclCommInitAll");
  sym(l.comm_destroy, "ncclCommDestroy");
  sym(l.comm_abort, "ncclCommAbort");
  sym(l.comm_get_async_error, "ncclCommGetAsyncError");
  sym(l.get_error_string, "ncclGetErrorString");
  sym(l.group_start, "ncclGroupStart");
  sym(l.group_end, "ncclGroupEnd");
  sym(l.send, "ncclSend");
  sym(l.recv, "ncclRecv");
  if (!complete) out.error = tried + " lacks NCCL 2.7's point-to-point calls";
  return out;
}

}  // namespace

const NcclLibrary& nccl() {
  static const Loaded loaded = load();  // once per process; the library stays loaded
  if (!loaded.error.empty())
    throw_error(ErrorCode::unsupported, loaded.error,
                "install NCCL 2.7 or later, or point RXM_NCCL_LIBRARY at its libnccl.so.2 (PyTorch's "
                "nvidia/nccl/lib/libnccl.so.2 works)");
  return loaded.library;
}

void check_nccl(ncclResult_t result, const char* call) {
  if (result == ncclSuccess) return;
  throw_error(ErrorCode::device, std::string(call) + " failed: " + nccl().get_error_string(result),
              "check the GPUs and the network with `radixmesh info` and NCCL_DEBUG=INFO");
}

}  // namespace radixmesh::comm
