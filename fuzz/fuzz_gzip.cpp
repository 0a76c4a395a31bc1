// libFuzzer target: io::read_atoms()/read_models() on a file, above all the gzip layer of the
// reader (concatenated members, trailing zeros and garbage, truncation, corrupt data) and the
// plain-file path (read(2) with the SHA-256 in the same pass, the check that refuses a PDB file
// named .pqr). The readers take a path, so the bytes go to a file in a
// per-process scratch directory (/dev/shm) named after the format.
//
// Input layout: byte 0 = flags, then the rest.
//   flags bit 0: .xyzq (else .pqr)    bit 1: read_models (else read_atoms)
//   bits 2-3: 0, 1 -> "built": the rest is byte A, byte B, then the text, which is gzip-
//                    compressed into 1-4 members (A bits 0-1) at level B % 10 (bit 7 of B: a
//                    long REMARK / comment line first, so that the text crosses the reader's
//                    128 KiB block), then the tail A bits 2-3 says (none, zero bytes, garbage,
//                    truncation by 1-16 bytes; A bits 4-7 size or pick it);
//             2  -> "raw": the rest is the .gz file as is;
//             3  -> "plain": the rest is an uncompressed .pqr/.xyzq file.
// Oracles: built files without garbage or truncation read exactly like the text through the
// stream parser (same atoms, or the same error message); garbage and truncation are always
// refused with InputError; plain files read exactly like the stream parser; every System
// returned keeps the limits and carries the SHA-256 of the file (io::sha256_file); a file
// refused as a PDB file reads like its text with ReadOptions::charges_as_given; only InputError
// is an expected exception.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/io/checksum.hpp"
#include "dcs/io/pqr.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::System;
using dcs::fuzz::Outcome;
using dcs::fuzz::require;

std::string gzip_member(const std::string& text, int level) {
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    dcs::fuzz::finding("harness: deflateInit2 failed");
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END)
    dcs::fuzz::finding("harness: deflate did not finish");
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) dcs::fuzz::finding("harness: cannot write " + path);
}

struct Reading {
  Outcome outcome = Outcome::kOk;
  std::string message;
  std::vector<System> models;
};

Reading read_path(const std::string& path, bool all_models, bool charges_as_given = false) {
  Reading r;
  const dcs::io::ReadOptions options{.charges_as_given = charges_as_given};
  r.outcome = dcs::fuzz::run_expecting(
      all_models ? "read_models" : "read_atoms",
      [&] {
        if (all_models)
          r.models = dcs::io::read_models(path, dcs::io::ModelCheck::kStructure, options);
        else r.models.push_back(dcs::io::read_atoms(path, options));
      },
      &r.message);
  require(r.outcome != Outcome::kUsageError, "reader threw UsageError: " + r.message);
  if (r.outcome == Outcome::kOk) {
    require(!r.models.empty(), "no models returned");
    const std::string sha256 = dcs::io::sha256_file(path);
    for (const System& m : r.models) {
      dcs::fuzz::check_system(m, path.c_str());
      require(m.source_sha256 == sha256, "source_sha256 is not the SHA-256 of the file");
      require(m.source_path == path, "source_path is not the path given");
    }
  }
  // The PDB check is the files' alone (the stream parsers do not make it): the file then reads
  // as its text does when the charges are taken as given.
  if (!charges_as_given && r.message.find("looks like a PDB file") != std::string::npos) {
    require(r.message.find("pdb2pqr") != std::string::npos, "PDB refusal without pdb2pqr");
    return read_path(path, all_models, true);
  }
  return r;
}

/// The text through the stream parsers, named `path` so that messages compare.
Reading read_text(const std::string& text, const std::string& path, bool xyzq, bool all_models) {
  Reading r;
  r.outcome = dcs::fuzz::run_expecting(
      "stream parser",
      [&] {
        std::istringstream in(text);
        if (xyzq) r.models.push_back(dcs::io::parse_xyzq(in, path));
        else if (all_models) r.models = dcs::io::parse_pqr_models(in, path);
        else r.models.push_back(dcs::io::parse_pqr(in, path));
      },
      &r.message);
  return r;
}

void require_same(const Reading& file, const Reading& text, const char* what) {
  require(file.outcome == text.outcome && file.message == text.message,
          std::string(what) + ": the file reads otherwise than its text: '" + file.message +
              "' vs '" + text.message + "'");
  if (file.outcome != Outcome::kOk) return;
  require(file.models.size() == text.models.size(), std::string(what) + ": other model count");
  for (std::size_t m = 0; m < file.models.size(); ++m)
    require(dcs::fuzz::same_atoms(file.models[m], text.models[m]) &&
                file.models[m].model == text.models[m].model &&
                file.models[m].model_count == text.models[m].model_count,
            std::string(what) + ": the file's atoms differ from its text's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  const bool xyzq = (flags & 1) != 0;
  const bool all_models = (flags & 2) != 0;
  const int mode = (flags >> 2) & 3;
  const std::string stem = (dcs::fuzz::scratch_dir() / "input").string();

  if (mode == 3) {  // plain file
    const std::string path = stem + (xyzq ? ".xyzq" : ".pqr");
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    write_file(path, text);
    const Reading file = read_path(path, all_models);
    if (text.empty()) {
      require(file.outcome == Outcome::kInputError, "an empty file was accepted");
      return 0;
    }
    require_same(file, read_text(text, path, xyzq, all_models), "plain file");
    return 0;
  }

  const std::string path = stem + (xyzq ? ".xyzq.gz" : ".pqr.gz");
  if (mode == 2) {  // raw .gz bytes
    write_file(path, std::string(reinterpret_cast<const char*>(data + 1), size - 1));
    read_path(path, all_models);
    return 0;
  }

  if (size < 3) return 0;
  const std::uint8_t a = data[1];
  const std::uint8_t b = data[2];
  std::string text(reinterpret_cast<const char*>(data + 3), size - 3);
  if ((b & 0x80) != 0 && text.size() + 16 < dcs::fuzz::kReaderBlock) {
    // Put the decompressed block boundary inside the text.
    const std::size_t k = (static_cast<std::size_t>(a) * 131 + text.size()) % (text.size() + 1);
    text = dcs::fuzz::filler_lines(dcs::fuzz::kReaderBlock - k, xyzq ? "#" : "REMARK ") + text;
  }
  const int level = b % 10;
  const std::size_t members = 1 + (a & 3);
  std::string bytes;
  for (std::size_t m = 0; m < members; ++m) {
    const std::size_t begin = text.size() * m / members;
    const std::size_t end = text.size() * (m + 1) / members;
    bytes += gzip_member(text.substr(begin, end - begin), level);
  }
  const int tail = (a >> 2) & 3;
  const std::size_t n = 1 + (a >> 4);
  static const std::vector<std::string> kGarbage = {"\x1f",
                                                    "\x1f\x8b",
                                                    "\x1f\x8b\x08",
                                                    std::string("\0\0x", 3),
                                                    "x",
                                                    "PK\x03\x04",
                                                    std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10),
                                                    std::string(1, '\0') + "\x1f",
                                                    "\n",
                                                    "\x8b\x1f",
                                                    "ATOM 1 N ALA 1 0 0 0 0 0\n",
                                                    std::string("\0\x1f\x8b", 3),
                                                    "\xff",
                                                    std::string(4096, '\0') + "!",
                                                    "\x1f\x8b\x08\x08",
                                                    "gz"};
  switch (tail) {
    case 1: bytes.append(n, '\0'); break;
    case 2: bytes += kGarbage[n - 1]; break;
    case 3: bytes.resize(bytes.size() - std::min(bytes.size(), n)); break;
    default: break;
  }
  write_file(path, bytes);
  const Reading file = read_path(path, all_models);
  if (tail == 2 || tail == 3) {
    require(file.outcome == Outcome::kInputError,
            std::string("a .gz file with ") + (tail == 2 ? "trailing garbage" : "a truncated end") +
                " was accepted");
    return 0;
  }
  require_same(file, read_text(text, path, xyzq, all_models), "gzip");
  return 0;
}
