// Signals (signals.hpp).
#include "signals.hpp"

#include <csignal>
#include <cstdlib>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/io/atomic_file.hpp"

namespace dcs::app {
namespace {

volatile std::sig_atomic_t g_signal_count = 0;
volatile std::sig_atomic_t g_first_signal = 0;

extern "C" void on_signal(int signal_number) {
  // First signal: ask the pipeline (and the atom readers) to stop at their next check; the
  // outputs of the run are removed as the stack unwinds and main_entry exits 128 + the signal.
  // Second: remove the pending temporaries now and leave at once: the outputs' temporaries, a
  // finished partial file and the outputs of a map whose renames are under way (io::CommitGroup).
  // Either way the status is 128 + the first signal (130 SIGINT, 143 SIGTERM). A partial file
  // that is not finished (<output>.partial) is kept for --resume.
  if (g_signal_count == 0) {
    g_signal_count = 1;
    g_first_signal = signal_number;
    request_interrupt();
    return;
  }
  io::remove_pending_temporaries();
  std::_Exit(128 + g_first_signal);
}

}  // namespace

int exit_status(int code) {
  if (code == static_cast<int>(ExitCode::kInterrupted) && g_first_signal != 0)
    return 128 + g_first_signal;
  return code;
}

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A reader of the summary that has gone (dcs ... | head) must not end a run whose outputs are
  // written: the failed write is reported once instead (summary.hpp).
  std::signal(SIGPIPE, SIG_IGN);
  // A file size limit (ulimit -f) would kill the process without a word; ignored, the write
  // fails with EFBIG and the run reports it and cleans up like any other write error.
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace dcs::app
