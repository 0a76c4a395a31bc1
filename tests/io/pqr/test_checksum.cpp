// SHA-256 of buffers and files, against published test vectors and sha256sum.
#include <string>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/io/checksum.hpp"
#include "pqr_test_util.hpp"

namespace {

TEST(Checksum, KnownVectors) {
  // FIPS 180-2 examples.
  EXPECT_EQ(dcs::io::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(dcs::io::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(dcs::io::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Checksum, FileMatchesSha256sum) {
  // `sha256sum tests/data/pqr/fixed_columns.pqr`, computed when the file was written.
  EXPECT_EQ(dcs::io::sha256_file(dcs::test::data_file("fixed_columns.pqr")),
            "f74c02a4205b7f5622729338ba31b81e87fb779130e58f30ab3aef30f7594d7d");
}

TEST(Checksum, FileAndBufferAgreeAcrossBlocks) {
  // Larger than the 64 KiB read block, not a multiple of it.
  std::string bytes;
  for (int i = 0; i < 300000; ++i) bytes.push_back(static_cast<char>((i * 131) % 251));
  dcs::test::ScratchDir dir;
  const std::string path = dir.file("blob.bin");
  dcs::test::write_bytes(path, bytes);
  EXPECT_EQ(dcs::io::sha256_file(path), dcs::io::sha256_hex(bytes));
  EXPECT_EQ(dcs::io::sha256_file(path).size(), 64u);
}

TEST(Checksum, MissingFileIsAnIoError) {
  try {
    (void)dcs::io::sha256_file("/nonexistent/dcs/file.pqr");
    ADD_FAILURE() << "no exception";
  } catch (const dcs::IoError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/dcs/file.pqr"), std::string::npos);
  }
}

}  // namespace
