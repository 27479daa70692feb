// Multisplit's type-erased entry: the checks that do not depend on the key type, then the backend.
#include <string>

#include "core/backends.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {

void validate_multisplit(const MultisplitArgs& args) {
  require(args.m >= 1 && args.m <= buckets::max_buckets,
          "multisplit: m = " + std::to_string(args.m) + " buckets (bucket_offsets has " +
              std::to_string(std::size_t(args.m) + 1) + " entries)",
          "pass m + 1 offsets for 1 <= m <= 65536 buckets");
  require(args.n == 0 || args.keys_in != nullptr, "multisplit: keys_in is null", "pass the keys' storage");
  validate_tuning(args.tuning, "multisplit");
}

BadBucket multisplit_host(Context& ctx, const MultisplitArgs& args, BucketSource source, const BucketSpec& spec) {
  validate_multisplit(args);
  const bool user_functor = spec.kind == BucketSpec::Kind::user;
  const bool on_gpu = ctx.backend() == Backend::cuda && (!user_functor || is_device_pointer(args.keys_in));
  if (!on_gpu) return cpu_multisplit(args, source, ctx.cpu_threads());
  require(!user_functor, "multisplit: a user bucket functor cannot run on device-resident keys through the host API",
          "call radixmesh::device::multisplit (radixmesh/device/multisplit.cuh) from your .cu file, or "
          "pass host-resident keys");
  return cuda_multisplit(ctx, args, spec);
}

}  // namespace radixmesh::detail
