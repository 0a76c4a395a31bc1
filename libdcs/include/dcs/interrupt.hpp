// A process-wide "stop soon" flag: set from a signal handler, polled by long-running work
// (the pipeline between slabs, the atom readers between blocks), which then throws
// dcs::InterruptedError so that every temporary is removed as the stack unwinds.
#pragma once

namespace dcs {

/// Sets the flag. Async-signal-safe (a lock-free std::atomic<bool> store); never cleared.
void request_interrupt() noexcept;

/// Whether request_interrupt() was called. Cheap (one relaxed-or-stronger atomic load).
bool interrupt_requested() noexcept;

}  // namespace dcs
