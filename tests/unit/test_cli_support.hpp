// Shared by the CLI tests (test_cli*.cpp): runs the built `radixmesh` as a subprocess in a scratch
// directory per test and checks failures the one way docs/cli.md promises: the exit code, one
// "radixmesh: error:" line naming the problem, nothing on stdout, no output or temporary left.
#pragma once
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "radixmesh/context.hpp"
#include "radixmesh/io.hpp"
#include "radixmesh/key_types.hpp"

#ifndef RXM_CLI_PATH
#error "RXM_CLI_PATH must name the built radixmesh binary"
#endif

namespace rxm = radixmesh;
namespace fs = std::filesystem;

namespace rxm_cli_test {

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the CLI with `args` (no shell), capturing stdout and stderr through files in `scratch`.
inline CliRun run_cli(const std::vector<std::string>& args, const fs::path& scratch) {
  const fs::path out_file = scratch / "cli.stdout", err_file = scratch / "cli.stderr";
  std::vector<std::string> argv_storage = {RXM_CLI_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  CliRun run;
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = slurp(out_file);
  run.err = slurp(err_file);
  fs::remove(out_file);
  fs::remove(err_file);
  return run;
}

inline std::string describe(const CliRun& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("rxm_cli_" + std::to_string(::getpid()) + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun run(const std::vector<std::string>& args) { return run_cli(args, dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A failed command: the exit code, one "radixmesh: error:" line naming `needle`, nothing on
  // stdout, and no file in the scratch directory beyond `inputs` (no output, no temporary).
  void expect_failure(const CliRun& r, int exit_code, const std::string& needle, const std::vector<std::string>& inputs) {
    SCOPED_TRACE(describe(r));
    EXPECT_EQ(r.exit_code, exit_code);
    EXPECT_EQ(r.err.rfind("radixmesh: error: ", 0), 0u);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "the error must be one line";
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should mention '" << needle << "'";
    EXPECT_TRUE(r.out.empty());
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      EXPECT_NE(std::find(inputs.begin(), inputs.end(), name), inputs.end()) << "left behind: " << name;
    }
  }

  template <class T> void write(const std::string& name, const std::vector<T>& data) {
    rxm::write_array(path(name), rxm::key_type_v<T>, data.data(), data.size());
  }

  fs::path dir_;
};

template <class T> std::vector<T> read_back(const std::string& file) {
  rxm::HostArray a = rxm::read_array(file);
  EXPECT_EQ(a.type(), rxm::key_type_v<T>);
  return std::vector<T>(a.as<T>(), a.as<T>() + a.size());
}

inline bool gpu_visible() { return !rxm::discover_cuda().topology.devices.empty(); }

}  // namespace rxm_cli_test
