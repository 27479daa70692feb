// remove_temporary_files_on_signals / remove_temporary_files_now (radixmesh/io.hpp): opt-in
// signal handlers that unlink the named temporaries of writes in progress, then let the signal
// do what it would have done (terminate the process, with the signal as its status).
#include <signal.h>

#include "io/temporary_registry.hpp"
#include "radixmesh/io.hpp"

namespace radixmesh {
namespace {

void remove_temporaries_and_reraise(int signal_number) {
  io_detail::unlink_registered_temporaries();
  // SA_RESETHAND restored the default action on entry; the signal is blocked until this handler
  // returns, so the re-raised one terminates the process then.
  ::raise(signal_number);
}

}  // namespace

void remove_temporary_files_now() noexcept { io_detail::unlink_registered_temporaries(); }

void remove_temporary_files_on_signals() {
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
        (current.sa_flags & SA_SIGINFO) != 0)
      continue;  // the program's own handler, or SIG_IGN: left as it is
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    ::sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace radixmesh
