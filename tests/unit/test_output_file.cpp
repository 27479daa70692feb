// Outputs being written (src/io/posix_file.hpp, radixmesh/io.hpp): an unnamed file until complete,
// or one hidden temporary name; nothing left behind by an error or a signal (SIGKILL included for
// the unnamed file); signal handlers only where the program asks for them.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/scratch_dir.hpp"
#include "io/posix_file.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/io.hpp"

namespace rxm = radixmesh;
namespace fs = std::filesystem;
using rxm::io_detail::AtomicOutputFile;
using rxm::io_detail::TemporaryNaming;

namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  std::vector<std::string> listing() const { return scratch_.names(); }
  fs::path target() const { return dir_ / "out.bin"; }

  rxm::testing::ScratchDir scratch_{"radixmesh_test_output_file"};
  fs::path dir_ = scratch_.path();
};

const std::string contents(1 << 16, 'x');

TEST_F(OutputFileTest, UnnamedFileHasNoNameUntilPublished) {
  AtomicOutputFile out(target());
  out.write(contents.data(), contents.size());
  out.finish();
  // O_TMPFILE is on every local Linux filesystem CI uses (ext4, xfs, btrfs, tmpfs).
  EXPECT_TRUE(out.temporary_path().empty());
  EXPECT_EQ(listing(), std::vector<std::string>{});
  out.publish();
  EXPECT_EQ(listing(), std::vector<std::string>{"out.bin"});
  EXPECT_EQ(fs::file_size(target()), contents.size());
}

TEST_F(OutputFileTest, UnnamedFileReplacesAnOldTarget) {
  rxm::write_array(target(), rxm::KeyType::u8, "old", 3);
  AtomicOutputFile out(target());
  out.write(contents.data(), contents.size());
  EXPECT_EQ(fs::file_size(target()), 3u);
  out.commit();
  EXPECT_EQ(listing(), std::vector<std::string>{"out.bin"});
  EXPECT_EQ(fs::file_size(target()), contents.size());
}

TEST_F(OutputFileTest, NamedModeUsesOneHiddenTemporary) {
  {
    AtomicOutputFile out(target(), TemporaryNaming::named);
    out.write(contents.data(), contents.size());
    const std::vector<std::string> names = listing();
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0].rfind(".out.bin.radixmesh-tmp-" + std::to_string(::getpid()) + "-", 0), 0u) << names[0];
    EXPECT_EQ(out.temporary_path().filename().string(), names[0]);
  }  // destroyed unpublished: removed
  EXPECT_EQ(listing(), std::vector<std::string>{});
  AtomicOutputFile out(target(), TemporaryNaming::named);
  out.write(contents.data(), contents.size());
  out.commit();
  EXPECT_EQ(listing(), std::vector<std::string>{"out.bin"});
}

TEST_F(OutputFileTest, UnpublishedWriterLeavesNothing) {
  {
    rxm::ArrayFileWriter out(dir_ / "k.npy", rxm::KeyType::u32, 4);
    const std::uint32_t keys[4] = {1, 2, 3, 4};
    out.write(keys, 2);
    EXPECT_THROW(out.finish(), rxm::Error);  // 2 of 4 written
  }
  EXPECT_EQ(listing(), std::vector<std::string>{});
}

using OutputFileDeathTest = OutputFileTest;

// A named temporary being written when SIGINT, SIGTERM or SIGHUP arrives is removed by the
// handlers of remove_temporary_files_on_signals(), and the process still dies of the signal.
TEST_F(OutputFileDeathTest, SignalHandlersRemoveTheNamedTemporary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(signal_number);
    EXPECT_EXIT(
        {
          rxm::remove_temporary_files_on_signals();
          AtomicOutputFile out(target(), TemporaryNaming::named);
          out.write(contents.data(), contents.size());
          if (!fs::exists(out.temporary_path())) ::_exit(7);
          ::raise(signal_number);
          ::_exit(8);
        },
        ::testing::KilledBySignal(signal_number), "");
    EXPECT_EQ(listing(), std::vector<std::string>{});
  }
}

// Without the opt-in the library installs no handler: the default action stays, and a killed
// writer of an unnamed file leaves nothing even so (the kernel frees it).
TEST_F(OutputFileDeathTest, UnnamedFileSurvivesNoSignalNotEvenSigkill) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int signal_number : {SIGTERM, SIGKILL}) {
    SCOPED_TRACE(signal_number);
    EXPECT_EXIT(
        {
          AtomicOutputFile out(target());
          out.write(contents.data(), contents.size());
          struct sigaction current {};
          ::sigaction(SIGTERM, nullptr, &current);
          if (current.sa_handler != SIG_DFL) ::_exit(7);
          ::raise(signal_number);
          ::_exit(8);
        },
        ::testing::KilledBySignal(signal_number), "");
    EXPECT_EQ(listing(), std::vector<std::string>{});
  }
}

// The opt-in leaves a signal the program ignores (nohup's SIGHUP) ignored.
TEST_F(OutputFileDeathTest, OptInKeepsIgnoredSignalsIgnored) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::signal(SIGHUP, SIG_IGN);
        rxm::remove_temporary_files_on_signals();
        ::raise(SIGHUP);
        struct sigaction current {};
        ::sigaction(SIGHUP, nullptr, &current);
        ::_exit(current.sa_handler == SIG_IGN ? 0 : 9);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
