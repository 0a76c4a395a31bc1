// Parallel parsing of an atom file held in memory. Chunks end only where a line ends (after
// "\n", or after a "\r" not followed by "\n", so "\r\n" is never split), so each chunk is read
// by a MemoryLineSource exactly as the serial LineSource reads those lines. A first pass counts
// each chunk's line endings in parallel, so every chunk knows its first line number and errors
// name the same file:line as the serial reader's. Each chunk stops at its first error; joining
// the chunks in order applies every line before it first, so the first error in file order
// wins, also one (MODEL/ENDMDL structure) that needs the lines before it.
//
// Memory: the file's bytes (held by the caller) plus, at the peak, the atoms twice (~200 bytes
// an atom): the chunks' and the model's, before the chunks' are freed at the end of the call.
// (The serial reader's growing vector peaks at 1.5 times the atoms.)
#include "parallel_read.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <thread>

#include <sys/mman.h>

#include "dcs/parallel.hpp"
#include "dcs/types.hpp"
#include "line_source.hpp"

namespace dcs::io::detail {
namespace {

#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // Linux 5.14's value, for older headers
#endif

struct ChunkSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::uint64_t first_line = 0;  ///< lines before the chunk
};

bool ends_line_before(const char* data, std::size_t size, std::size_t pos) {
  if (pos == 0 || pos >= size) return true;
  return data[pos - 1] == '\n' || (data[pos - 1] == '\r' && data[pos] != '\n');
}

std::vector<ChunkSpan> split(const char* data, std::size_t size, const ParallelRead& parallel,
                             unsigned threads) {
  constexpr std::size_t kMinAutoChunk = std::size_t{1} << 20;
  const std::size_t chunk_bytes =
      parallel.chunk_bytes != 0 ? parallel.chunk_bytes
                                : std::max(kMinAutoChunk, size / (std::size_t{4} * threads) + 1);
  std::vector<ChunkSpan> spans;
  std::size_t begin = 0;
  while (begin < size) {
    std::size_t end = std::min(size, begin + chunk_bytes);
    while (!ends_line_before(data, size, end)) ++end;  // a long line makes the chunk longer
    spans.push_back(ChunkSpan{begin, end, 0});
    begin = end;
  }
  return spans;
}

/// Line endings as LineSource counts them: "\n", "\r\n" and a lone "\r" are one each.
std::uint64_t count_line_ends(const char* data, std::size_t size) {
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      count += (i == 0 || data[i - 1] != '\r') ? 1 : 0;
    } else if (data[i] == '\r') {
      ++count;
    }
  }
  return count;
}

/// `count` default atoms. For a million atoms (~200 MB) construction took ~0.09 s, mostly page
/// faults, longer than parsing on many cores. So the reserved pages are first made present on
/// `threads` threads by the kernel (MADV_POPULATE_WRITE, Linux 5.14; refused on older kernels,
/// then construction faults them as before) and only then constructed (~0.03 s). (MADV_HUGEPAGE
/// was faster, but 0.5 s when the kernel first had to compact memory: not used.)
std::vector<Atom> default_atoms(std::size_t count, unsigned threads) {
  std::vector<Atom> atoms;
  atoms.reserve(count);
  constexpr std::uintptr_t kPage = 4096;
  const std::uintptr_t begin =
      (reinterpret_cast<std::uintptr_t>(atoms.data()) + kPage - 1) & ~(kPage - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(atoms.data() + count) & ~(kPage - 1);
  if (end > begin) {
    const std::size_t pages = (end - begin) / kPage;
    parallel_for(pages, threads, [&](std::size_t first, std::size_t last) {
      (void)::madvise(reinterpret_cast<void*>(begin + first * kPage), (last - first) * kPage,
                      kPopulateWrite);
    });
  }
  atoms.resize(count);
  return atoms;
}

/// Reads the chunks of `bytes` on the threads; `beside(lines)` runs on one more thread
/// meanwhile, told the number of lines of the file.
template <class Chunk, class ReadChunk, class Beside>
std::vector<Chunk> read_chunks(const std::vector<char>& bytes, const std::string& name,
                               const ParallelRead& parallel, ReadChunk read_chunk, Beside beside) {
  const unsigned threads = resolve_threads(parallel.threads);
  const char* data = bytes.data();
  std::vector<ChunkSpan> spans = split(data, bytes.size(), parallel, threads);
  const unsigned used = static_cast<unsigned>(std::min<std::size_t>(threads, spans.size()));
  std::vector<std::uint64_t> lines(spans.size(), 0);
  parallel_for(spans.size(), used, [&](std::size_t first, std::size_t last) {
    for (std::size_t c = first; c < last; ++c)
      lines[c] = count_line_ends(data + spans[c].begin, spans[c].end - spans[c].begin);
  });
  // An upper bound of the file's lines (a last line without an ending is one more).
  const std::uint64_t total_lines = std::accumulate(lines.begin(), lines.end(), std::uint64_t{1});
  std::exclusive_scan(lines.begin(), lines.end(), lines.begin(), std::uint64_t{0});
  for (std::size_t c = 0; c < spans.size(); ++c) spans[c].first_line = lines[c];
  std::exception_ptr beside_error;
  std::thread helper = start_thread([&] {
    try {
      beside(total_lines);
    } catch (...) {
      beside_error = std::current_exception();
    }
  });
  struct Join {  // also when reading throws: the helper uses this frame's variables
    std::thread& thread;
    ~Join() {
      if (thread.joinable()) thread.join();
    }
  } join{helper};
  std::vector<Chunk> chunks(spans.size());
  parallel_for(spans.size(), used, [&](std::size_t first, std::size_t last) {
    for (std::size_t c = first; c < last; ++c) {
      MemoryLineSource source(data + spans[c].begin, spans[c].end - spans[c].begin, name,
                              spans[c].first_line);
      read_chunk(source, chunks[c]);
      if (chunks[c].error) break;  // later chunks of this range cannot matter
    }
  });
  helper.join();
  if (beside_error) std::rethrow_exception(beside_error);
  return chunks;
}

}  // namespace

std::vector<System> parse_pqr_bytes(const std::vector<char>& bytes, const std::string& name,
                                    const ModelRead& how, const ParallelRead& parallel) {
  // The first model's atoms are moved from the chunks into atoms made meanwhile, one per line
  // when lines average 40 bytes or more (a PQR atom line has ~80; shorter lines would make
  // this room larger than 5x the file, so it is made later, for the atoms found).
  std::vector<Atom> room;
  std::vector<PqrChunk> chunks = read_chunks<PqrChunk>(
      bytes, name, parallel,
      [&](LineSource& source, PqrChunk& chunk) { read_pqr_chunk(source, name, chunk); },
      [&](std::uint64_t lines) {
        if (!how.all && lines * 40 <= bytes.size() + 40)
          room = default_atoms(lines, resolve_threads(parallel.threads));
      });
  return replay_pqr_chunks(chunks, name, how, resolve_threads(parallel.threads), std::move(room));
}

System parse_xyzq_bytes(const std::vector<char>& bytes, const std::string& name,
                        const ParallelRead& parallel) {
  std::vector<XyzqChunk> chunks = read_chunks<XyzqChunk>(
      bytes, name, parallel,
      [&](LineSource& source, XyzqChunk& chunk) { read_xyzq_chunk(source, name, chunk); },
      [](std::uint64_t) {});
  return join_xyzq_chunks(chunks, name);
}

}  // namespace dcs::io::detail
