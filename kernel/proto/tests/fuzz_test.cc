// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The fuzz body of fuzz_one.c under ASan/UBSan, fed deterministic random,
// mutated and truncated packets, so every test run fuzzes a little.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "fuzz_one.h"
#include "pkt_gen.hh"

using mrtest::Gen;
using Bytes = std::vector<uint8_t>;

namespace {

// Runs the fuzz body on an exact-size heap copy; returns the decode result.
int FuzzOne(const Bytes &b)
{
	uint8_t *heap = new uint8_t[b.size() ? b.size() : 1];
	mr_pkt p;
	int rc;

	if (!b.empty())
		memcpy(heap, b.data(), b.size());
	EXPECT_EQ(mr_fuzz_one(heap, b.size()), 0);
	rc = mr_wire_decode(heap, (uint32_t)b.size(), &p);
	delete[] heap;
	return rc;
}

void Mutate(Gen &g, Bytes &b)
{
	switch (g.Below(6)) {
	case 0: // flip a bit
		if (!b.empty())
			b[g.Below(b.size())] ^= (uint8_t)(1u << g.Below(8));
		break;
	case 1: // overwrite a header byte
		if (!b.empty())
			b[g.Below(b.size() < 64 ? b.size() : 64)] =
				(uint8_t)g.U32();
		break;
	case 2: // truncate
		b.resize(g.Below(b.size() + 1));
		break;
	case 3: // append
		for (uint32_t n = 1 + g.Below(8); n; n--)
			b.push_back((uint8_t)g.U32());
		break;
	case 4: // a 32-bit field gets an edge value
		if (b.size() >= 4) {
			static const uint32_t edge[] = { 0, 1, 0x7fffffff,
							 0x80000000, 0x80000001,
							 0xffffffff, 4096, 4097 };
			uint32_t at = g.Below(b.size() - 3);

			mr_put_be32(&b[at], edge[g.Below(8)]);
		}
		break;
	default: // the opcode of another packet kind
		if (b.size() >= 2)
			b[1] = mrtest::AllOpcodes()[g.Below(mrtest::AllOpcodes().size())];
		break;
	}
}

} // namespace

TEST(Fuzz, RandomBytes)
{
	Gen g(42);

	for (int i = 0; i < 200000; i++) {
		Bytes b(g.Below(100));

		for (auto &x : b)
			x = (uint8_t)g.U32();
		if (b.size() > 0 && g.Chance(90))
			b[0] = MR_WIRE_VERSION;
		if (b.size() > 1 && g.Chance(80))
			b[1] = mrtest::AllOpcodes()[g.Below(mrtest::AllOpcodes().size())];
		if (b.size() > 4 && g.Chance(80))
			b[4] = 0;
		FuzzOne(b);
		if (HasFailure())
			return;
	}
}

// Valid packets, damaged: every error code shows up, and what still
// decodes re-encodes byte for byte (checked in mr_fuzz_one()).
TEST(Fuzz, MutatedValidPackets)
{
	std::map<int, int> seen;
	Gen g(7);

	for (int i = 0; i < 200000; i++) {
		uint8_t op = mrtest::AllOpcodes()[g.Below(mrtest::AllOpcodes().size())];
		mr_pkt p;

		do // small payloads: the bytes that matter are the headers
			p = g.Valid(op);
		while (p.payload_len > 256);
		Bytes b = g.Encode(p);

		ASSERT_FALSE(b.empty());
		for (uint32_t n = 1 + g.Below(3); n; n--)
			Mutate(g, b);
		seen[FuzzOne(b)]++;
		if (HasFailure())
			return;
	}
	for (int rc = 0; rc >= -MR_ELENGTH; rc--)
		EXPECT_GT(seen[rc], 100) << "decode result " << rc;
}

TEST(Fuzz, EveryPrefixOfValidPackets)
{
	Gen g(9);

	for (int i = 0; i < 2000; i++) {
		mr_pkt p = g.Valid(mrtest::AllOpcodes()[g.Below(mrtest::AllOpcodes().size())]);

		if (p.payload_len > 100)
			continue;
		Bytes b = g.Encode(p);

		for (size_t len = 0; len <= b.size(); len++) {
			int rc = FuzzOne(Bytes(b.begin(), b.begin() + len));

			if (len < mr_wire_hdr_len(p.base.opcode)) {
				ASSERT_EQ(rc, -MR_ETRUNC);
			}
		}
		ASSERT_EQ(FuzzOne(b), 0);
	}
}
