// Signals: the first SIGINT/SIGTERM asks the pipeline to stop at its next check (the run's
// outputs are removed as the stack unwinds); a second removes the pending temporaries and leaves
// at once. Either way the exit status is 128 + the first signal (130, 143).
#pragma once

namespace dcs::app {

void install_signal_handlers();

/// The exit status of a run that ended with `code`: an interrupted run exits 128 + the signal
/// that interrupted it (ExitCode::kInterrupted is SIGINT's 130).
int exit_status(int code);

}  // namespace dcs::app
