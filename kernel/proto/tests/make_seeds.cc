// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Writes a seed corpus for fuzz_decode: valid packets of every opcode.
#include <cstdio>
#include <string>

#include "pkt_gen.hh"

int main(int argc, char **argv)
{
	mrtest::Gen g(2024);
	int n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (uint8_t op : mrtest::AllOpcodes()) {
		for (int i = 0; i < 8; i++) {
			mr_pkt p;

			do
				p = g.Valid(op);
			while (p.payload_len > 64);
			auto b = g.Encode(p);
			std::string name = std::string(argv[1]) + "/seed-" +
					   std::to_string(n++);
			FILE *f = fopen(name.c_str(), "wb");

			if (!f || fwrite(b.data(), 1, b.size(), f) != b.size())
				return 1;
			fclose(f);
		}
	}
	return 0;
}
