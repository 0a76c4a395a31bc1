#include "dcs/io/checksum.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <openssl/evp.h>

#include "dcs/error.hpp"

namespace dcs::io {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

}  // namespace

// Through OpenSSL's EVP interface: the low-level SHA256_* calls are deprecated in OpenSSL 3.
struct Sha256::Context {
  struct Deleter {
    void operator()(EVP_MD_CTX* md) const noexcept { EVP_MD_CTX_free(md); }
  };
  std::unique_ptr<EVP_MD_CTX, Deleter> ctx{EVP_MD_CTX_new()};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (!context_->ctx || EVP_DigestInit_ex(context_->ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256: OpenSSL could not initialise a digest context");
  }
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(context_->ctx.get(), data, size) != 1)
    throw Error("SHA-256: digest update failed");
}

std::string Sha256::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->ctx.get(), digest.data(), &length) != 1) {
    throw Error("SHA-256: digest finalisation failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0f]);
  }
  return out;
}

std::string sha256_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw IoError("cannot open '" + path + "' to compute its checksum: " + std::strerror(errno));
  }
  Sha256 sha;
  std::array<char, 1 << 16> block{};
  for (;;) {
    const std::size_t got = std::fread(block.data(), 1, block.size(), file.get());
    if (got > 0) sha.update(block.data(), got);
    if (got < block.size()) {
      if (std::ferror(file.get())) {
        throw IoError("cannot read '" + path +
                      "' to compute its checksum: " + std::strerror(errno));
      }
      break;
    }
  }
  return sha.hex();
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  return sha.hex();
}

}  // namespace dcs::io
