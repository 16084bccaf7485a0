// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "gcm.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <openssl/evp.h>
#include <random>

extern "C" {
#include "aead.h"
}

namespace conform {
namespace {

static_assert(kAadLen == MR_AEAD_AAD_LEN && kTrailerLen == MR_AEAD_TRAILER_LEN);
static_assert(kFlagEncrypted == MR_FLAG_ENCRYPTED);

struct CtxFree {
    void operator()(EVP_CIPHER_CTX *c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

// One GCM operation in place: @aad authenticated, @text (@len bytes)
// encrypted or decrypted, @tag written (seal) or checked (open).
bool Gcm(const DirKey &k, uint64_t counter, const uint8_t *aad, uint8_t *text, uint32_t len,
         uint8_t *tag, bool seal) {
    Ctx ctx(EVP_CIPHER_CTX_new());
    uint8_t nonce[MR_AEAD_NONCE_LEN], scratch[16];
    int n = 0;
    mr_aead_nonce(nonce, k.salt.data(), counter);
    const int enc = seal ? 1 : 0;
    if (!ctx ||
        EVP_CipherInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr, nullptr, nullptr, enc) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, MR_AEAD_NONCE_LEN, nullptr) != 1 ||
        EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, k.key.data(), nonce, enc) != 1 ||
        EVP_CipherUpdate(ctx.get(), nullptr, &n, aad, MR_AEAD_AAD_LEN) != 1)
        return false;
    if (len && EVP_CipherUpdate(ctx.get(), text, &n, text, static_cast<int>(len)) != 1)
        return false;
    if (!seal && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, MR_AEAD_TAG_LEN, tag) != 1)
        return false;
    if (EVP_CipherFinal_ex(ctx.get(), scratch, &n) != 1)
        return false; // open: the tag does not check
    return !seal || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, MR_AEAD_TAG_LEN, tag) == 1;
}

} // namespace

bool ParsePsk(const std::string &text, Psk *psk, std::string *why) {
    switch (mr_aead_parse_psk(text.data(), static_cast<u32>(text.size()), psk->data())) {
    case 0:
        return true;
    case -MR_ELENGTH:
        *why = "--psk: " + std::to_string(text.size()) + " characters, want " +
               std::to_string(MR_AEAD_PSK_HEX_LEN) + " hex digits";
        return false;
    default:
        *why = "--psk: not a hex number";
        return false;
    }
}

Bytes V4Mapped(const uint8_t ip[4]) {
    Bytes a(MR_AEAD_ADDR_LEN, 0);
    a[10] = a[11] = 0xff;
    std::copy(ip, ip + 4, a.begin() + 12);
    return a;
}

DirKey DeriveKey(const Psk &psk, const Bytes &src, const Bytes &dst) {
    uint8_t out[MR_AEAD_KDF_OUT_LEN];
    DirKey k;
    if (src.size() != MR_AEAD_ADDR_LEN || dst.size() != MR_AEAD_ADDR_LEN)
        return k; // no address: a key nothing opens with
    mr_aead_kdf(psk.data(), src.data(), dst.data(), out);
    std::copy(out, out + MR_AEAD_KEY_LEN, k.key.begin());
    std::copy(out + MR_AEAD_KEY_LEN, out + MR_AEAD_KEY_LEN + MR_AEAD_SALT_LEN, k.salt.begin());
    return k;
}

namespace {
std::atomic<uint64_t> g_counter{[] {
    std::random_device rd;
    return static_cast<uint64_t>(rd()) << 32 | rd();
}()};
} // namespace

uint64_t NextCounter() {
    return ++g_counter;
}

void SkipCounters(uint64_t used) {
    uint64_t now = g_counter.load();
    while (used > now && used - now < (1ull << 32) && !g_counter.compare_exchange_weak(now, used)) {
    }
}

Bytes Seal(const DirKey &k, const Bytes &clear, uint64_t counter) {
    Bytes b = clear;
    if (b.size() < MR_AEAD_AAD_LEN)
        return b;
    const uint32_t text_len = static_cast<uint32_t>(b.size() - MR_AEAD_AAD_LEN);
    b[2] |= MR_FLAG_ENCRYPTED;
    b.resize(b.size() + MR_AEAD_TRAILER_LEN);
    mr_aead_put_counter(b.data(), text_len, counter);
    uint8_t *tag = b.data() + MR_AEAD_AAD_LEN + text_len + MR_AEAD_COUNTER_LEN;
    if (!Gcm(k, counter, b.data(), b.data() + MR_AEAD_AAD_LEN, text_len, tag, true))
        std::fill(tag, tag + MR_AEAD_TAG_LEN, 0); // (no cipher: nothing opens it)
    return b;
}

const char *OpenErrorName(OpenError e) {
    switch (e) {
    case OpenError::NotEncrypted:
        return "rx_drop_not_encrypted";
    case OpenError::Short:
        return "rx_drop_short";
    case OpenError::Auth:
        break;
    }
    return "rx_drop_auth";
}

std::optional<Opened> Open(const DirKey &k, const Bytes &pkt, OpenError *err) {
    u32 text_len = 0;
    if (pkt.size() < MR_BASE_HDR_LEN) {
        *err = OpenError::Short;
        return std::nullopt;
    }
    if (!mr_aead_is_encrypted(pkt.data())) {
        *err = OpenError::NotEncrypted;
        return std::nullopt;
    }
    if (mr_aead_text_len(static_cast<u32>(pkt.size()), &text_len)) {
        *err = OpenError::Short;
        return std::nullopt;
    }
    Opened o;
    o.clear = pkt;
    o.counter = mr_aead_get_counter(pkt.data(), text_len);
    uint8_t *tag = o.clear.data() + MR_AEAD_AAD_LEN + text_len + MR_AEAD_COUNTER_LEN;
    if (!Gcm(k, o.counter, o.clear.data(), o.clear.data() + MR_AEAD_AAD_LEN, text_len, tag,
             false)) {
        *err = OpenError::Auth;
        return std::nullopt;
    }
    o.clear.resize(MR_AEAD_AAD_LEN + text_len);
    o.clear[2] &= static_cast<uint8_t>(~MR_FLAG_ENCRYPTED);
    return o;
}

} // namespace conform
