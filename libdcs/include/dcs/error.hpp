// Error types thrown by every dcs library. Library code never prints or exits: it throws one of
// these with a message that names the file, line or parameter at fault, and the application
// maps the type onto an exit code (see ExitCode).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dcs {

/// Exit codes of the `dcs` executable (documented in the README).
enum class ExitCode : int {
  kOk = 0,
  kRuntimeError = 1,      ///< a failure while computing or writing (CUDA, I/O, out of memory)
  kUsageError = 2,        ///< bad command line (CLI11 parse errors, inconsistent options)
  kInputError = 3,        ///< bad input file: missing, unreadable, malformed
  kValidationFailed = 4,  ///< --validate found an error above its tolerance
  kInternalError = 70,    ///< a bug in dcs (a broken invariant): please report it
  kInterrupted = 130,     ///< SIGINT/SIGTERM; nothing is left under the final output name
};

/// Base class of all dcs errors; what() is a complete, user-facing sentence.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual ExitCode exit_code() const noexcept { return ExitCode::kRuntimeError; }
};

/// Bad input data. The message is "<file>:<line>: <reason>" when a line is known.
class InputError : public Error {
 public:
  InputError(const std::string& file, std::uint64_t line, const std::string& reason)
      : Error(line > 0 ? file + ":" + std::to_string(line) + ": " + reason : file + ": " + reason),
        file_(file),
        line_(line),
        reason_(reason) {}
  const std::string& file() const noexcept { return file_; }
  std::uint64_t line() const noexcept { return line_; }  ///< 1-based; 0 when not tied to a line
  const std::string& reason() const noexcept { return reason_; }
  ExitCode exit_code() const noexcept override { return ExitCode::kInputError; }

 private:
  std::string file_;
  std::uint64_t line_;
  std::string reason_;
};

/// An inconsistent or impossible request (grid too large, bad option value, unknown kernel).
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::kUsageError; }
};

/// Reading or writing a file failed (permissions, disk full, existing output without --force).
class IoError : public Error {
 public:
  using Error::Error;
};

/// A CUDA runtime call or kernel launch failed.
class CudaError : public Error {
 public:
  using Error::Error;
};

/// --validate measured an error above the stated tolerance.
class ValidationError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::kValidationFailed; }
};

/// A broken invariant inside dcs: a bug, never the user's doing. Always exits kInternalError.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what)
      : Error("internal error (a bug in dcs; please report it): " + what) {}
  ExitCode exit_code() const noexcept override { return ExitCode::kInternalError; }
};

/// The run was interrupted by a signal.
class InterruptedError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::kInterrupted; }
};

}  // namespace dcs
