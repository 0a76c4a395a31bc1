// Runs a computation without the GIL while Python's signal handlers stay alive: the work runs
// on its own thread; the calling thread waits in short steps and, holding the GIL briefly,
// lets Python handle pending signals (PyErr_CheckSignals). Ctrl-C sets dcs's interrupt flag
// (dcs/interrupt.hpp), the engine stops between slabs and unwinds, the flag is cleared and the
// KeyboardInterrupt is raised in the caller. The library's warnings of the call are issued as
// Python warnings once it is over (library_warnings.hpp).
#pragma once

#include <chrono>
#include <future>
#include <thread>
#include <utility>

#include <nanobind/nanobind.h>

#include "dcs/interrupt.hpp"
#include "library_warnings.hpp"

namespace dcs::python {

template <class Work>
auto run_interruptible(Work&& work) -> decltype(work()) {
  namespace nb = nanobind;
  using Result = decltype(work());
  std::packaged_task<Result()> task(std::forward<Work>(work));
  std::future<Result> future = task.get_future();
  bool interrupted = false;
  {
    nb::gil_scoped_release release;
    std::thread thread(std::move(task));
    while (future.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      nb::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {  // a handler raised (KeyboardInterrupt): stop the work
        interrupted = true;
        request_interrupt();
        break;
      }
    }
    thread.join();
  }
  if (interrupted) {
    clear_interrupt();
    warning_collector().take();  // the run was abandoned: its warnings say nothing more
    throw nb::python_error();    // the handler's exception, still set on this thread
  }
  issue_library_warnings();
  return future.get();  // the work's result, or its exception
}

}  // namespace dcs::python
