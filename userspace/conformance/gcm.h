// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Packet encryption as the runner and the host target do it
// (protocol.rst, "Encryption"): the layout, key derivation and nonce are
// proto/aead.c's, the AES-128-GCM cipher OpenSSL's libcrypto (the kernel
// uses its crypto API: crypt.c).
#pragma once

#include "target.h"

#include <array>
#include <optional>
#include <string>

namespace conform {

// The pre-shared key: 32 bytes.
using Psk = std::array<uint8_t, 32>;

// The key of one direction, K(src, dst): AES key and nonce salt.
struct DirKey {
    std::array<uint8_t, 16> key{};
    std::array<uint8_t, 4> salt{};
};

// The base header, the AAD; the trailer after the ciphertext.
constexpr uint32_t kAadLen = 24;
constexpr uint32_t kTrailerLen = 8 + 16; // counter, tag
constexpr uint8_t kFlagEncrypted = 0x04;

// @text as the module parameter takes it (64 hex digits); false with *why.
bool ParsePsk(const std::string &text, Psk *psk, std::string *why);
// An IPv4 address (network order bytes) as 16 bytes, v4-mapped.
Bytes V4Mapped(const uint8_t ip[4]);
// K(@src, @dst): HMAC-SHA256(PSK, label || src || dst), src and dst 16 bytes.
DirKey DeriveKey(const Psk &psk, const Bytes &src, const Bytes &dst);
// A nonce counter never used before by this process: it starts at random,
// as each of crypt.c's keys, and advances by one per call.
uint64_t NextCounter();
// Moves the counter on past @used, a counter a case chose (counter=).
void SkipCounters(uint64_t used);

// @clear (at least the base header) sealed with @k and @counter: ENCRYPTED
// set in the base header, the rest encrypted, then the counter and the tag.
// Any length of ciphertext, even one the receiver must refuse.
Bytes Seal(const DirKey &k, const Bytes &clear, uint64_t counter);

// Why a packet does not open (crypt.c's drops).
enum class OpenError { NotEncrypted, Short, Auth };
const char *OpenErrorName(OpenError e); // the counter: rx_drop_not_encrypted ...

struct Opened {
    Bytes clear;          // ENCRYPTED cleared, the trailer gone
    uint64_t counter = 0; // the trailer's
};
// @pkt checked and decrypted with @k, as mr_crypt_rx() and mr_crypt_open()
// check it: ENCRYPTED, then the length, then the tag. *err on failure.
std::optional<Opened> Open(const DirKey &k, const Bytes &pkt, OpenError *err);

} // namespace conform
