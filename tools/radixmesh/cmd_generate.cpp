// radixmesh generate: a seeded array of keys from one of rxm::generate's distributions, to a file.
#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"

namespace radixmesh::cli {

namespace {

struct GenerateFlags {
  std::string distribution = "uniform";
  std::string n;
  std::string type;
  std::string out;
  GenerateOptions options;
  OutputFlags output;
};

void run_generate(const GenerateFlags& flags) {
  GenerateOptions options = flags.options;
  options.distribution = parse_distribution(flags.distribution);
  const KeyType type = parse_key_type(flags.type);
  const std::size_t n = parse_count(flags.n);
  require(options.special_fraction >= 0 && options.special_fraction <= 1,
          "--special-fraction " + std::to_string(options.special_fraction) + " is not in [0, 1]",
          "give a fraction between 0 and 1");
  require(options.special_fraction == 0 || is_floating(type),
          "--special-fraction applies to floating-point types only, not " + std::string(name_of(type)),
          "drop --special-fraction, or use --type f16, bf16, f32 or f64");

  // Refuse before allocating: the array, then room for it on disk.
  const std::size_t bytes = n * size_of(type);
  require_host_memory(bytes, "generate --n " + flags.n + " of " + std::string(name_of(type)));
  StagedOutputs::check_destination(flags.out, bytes, "--out");

  ProgressLine progress(flags.output.progress);
  auto start = std::chrono::steady_clock::now();
  progress.phase("generating " + std::to_string(n) + " " + std::string(name_of(type)) + " keys");
  HostArray keys(type, n);
  generate(type, keys.data(), n, options);
  const double generate_s = seconds_since(start);

  start = std::chrono::steady_clock::now();
  progress.phase("writing " + flags.out);
  StagedOutputs outputs;
  outputs.write(flags.out, type, keys.data(), n);
  outputs.commit();
  progress.finish();
  const double write_s = seconds_since(start);

  if (flags.output.json) {
    print_json({{"command", "generate"},
                {"out", flags.out},
                {"n", n},
                {"type", name_of(type)},
                {"distribution", name_of(options.distribution)},
                {"seed", options.seed},
                {"bytes", bytes},
                {"seconds", {{"generate", generate_s}, {"write", write_s}}}});
  } else {
    std::printf("generated %zu %s keys (%s, seed %llu) in %.3f s, wrote %s (%s) in %.3f s\n", n,
                std::string(name_of(type)).c_str(), std::string(name_of(options.distribution)).c_str(),
                static_cast<unsigned long long>(options.seed), generate_s, flags.out.c_str(),
                format_bytes(bytes).c_str(), write_s);
  }
}

}  // namespace

std::vector<Command> register_generate(CLI::App& root, const Invocation&) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* cmd = root.add_subcommand("generate", "Write a seeded array of keys drawn from a distribution");
  cmd->add_option("--dist", flags->distribution,
                  "uniform, normal, zipf, sorted, reverse-sorted, nearly-sorted, all-equal, few-distinct, "
                  "reduced-entropy")
      ->capture_default_str();
  cmd->add_option("--n", flags->n, "How many keys: 100000000, 1e8, 2^28, 100M, 256Mi")->required();
  cmd->add_option("--type", flags->type, "Key type: u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64")->required();
  cmd->add_option("--out", flags->out, "Output file (.npy: NumPy array with its dtype; otherwise raw)")->required();
  cmd->add_option("--seed", flags->options.seed, "Random seed (same seed, same array)")->capture_default_str();
  cmd->add_option("--zipf-s", flags->options.zipf_s, "Zipf exponent s (--dist zipf)")->capture_default_str();
  cmd->add_option("--zipf-universe", flags->options.zipf_universe, "Zipf ranks 1..U (--dist zipf)")
      ->capture_default_str();
  cmd->add_option("--entropy-bits", flags->options.entropy_bits, "Random low bits (--dist reduced-entropy)")
      ->capture_default_str();
  cmd->add_option("--distinct", flags->options.distinct, "Distinct values (--dist few-distinct)")
      ->capture_default_str();
  cmd->add_option("--swap-fraction", flags->options.swap_fraction, "Fraction swapped (--dist nearly-sorted)")
      ->capture_default_str();
  cmd->add_option("--mean", flags->options.mean, "Mean (--dist normal)")->capture_default_str();
  cmd->add_option("--stddev", flags->options.stddev, "Standard deviation (--dist normal)")->capture_default_str();
  cmd->add_option("--lo", flags->options.lo, "Uniform floats: lower bound")->capture_default_str();
  cmd->add_option("--hi", flags->options.hi, "Uniform floats: upper bound (exclusive)")->capture_default_str();
  cmd->add_flag("--float-full-range", flags->options.float_full_range,
                "Uniform floats over every finite bit pattern instead of [lo, hi)");
  cmd->add_option("--special-fraction", flags->options.special_fraction,
                  "Floats: fraction replaced by NaN, +-inf, +-0 and denormals")
      ->capture_default_str();
  cmd->add_option("--threads", flags->options.threads, "Host threads (0: all)")->capture_default_str();
  add_output_flags(*cmd, flags->output);
  return {{cmd, [flags] { run_generate(*flags); }}};
}

}  // namespace radixmesh::cli
