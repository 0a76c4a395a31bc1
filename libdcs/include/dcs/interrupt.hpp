// A process-wide "stop soon" flag: set from a signal handler, polled by long-running work
// (the pipeline between slabs, the atom readers between blocks), which then throws
// dcs::InterruptedError so that every temporary is removed as the stack unwinds.
#pragma once

namespace dcs {

/// Sets the flag. Async-signal-safe (a lock-free std::atomic<bool> store). The command line
/// never clears it; a library caller that outlives the interruption does (clear_interrupt()).
void request_interrupt() noexcept;

/// Whether request_interrupt() was called. Cheap (one relaxed-or-stronger atomic load).
bool interrupt_requested() noexcept;

/// Clears the flag once the interrupted work has unwound, so that a long-lived process (the
/// Python package after a KeyboardInterrupt) can compute again.
void clear_interrupt() noexcept;

}  // namespace dcs
