// Task records of a job array: each task of a --shard batch leaves a small table of what it did
// in the output directory, and `dcs batch-summary DIR` adds up the tasks' tables (which tasks
// have not reported, which maps failed).
//
// Format (tab-separated, one file per task, dcs-task-<I>-of-<N>.tsv, written atomically):
//   # dcs task I/N complete|interrupted
//   status input model outputs seconds error
// status: written | skipped (complete already) | failed | not-attempted; model: -1 unless
// --models each; outputs: comma-separated; tabs, newlines and backslashes in fields as \t \n \\.
#pragma once

#include <string>
#include <vector>

#include "dcs/run.hpp"

namespace dcs::app {

/// The record's path: <dir>/dcs-task-<index>-of-<count>.tsv (dir empty: the current directory).
std::string task_record_path(const std::string& dir, const Shard& shard);

/// Writes (atomically, replacing an earlier one) the record of task `shard` (resolved) with
/// `results`; `interrupted`: the task stopped early. Throws IoError.
void write_task_record(const std::string& dir, const Shard& shard,
                       const std::vector<RunResult>& results, bool interrupted);

/// `dcs batch-summary DIR`: prints each task's counts, the tasks missing, every failed map and a
/// total line. Exit status 0 when every task reported complete and no map failed, else 1.
/// Throws UsageError (no records in `dir`) or InputError (a damaged record).
int summarise_task_records(const std::string& dir);

}  // namespace dcs::app
