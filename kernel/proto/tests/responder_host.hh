// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The responder engine's host in the tests: its environment
// (responder.h) is defined once, in responder_test.cc, and forwards to
// the ResponderSink of the test that owns the engine. The sink's defaults
// are memory that takes everything, and a receive queue of `posted`
// receives.
#ifndef METAROCE_PROTO_TESTS_RESPONDER_HOST_HH
#define METAROCE_PROTO_TESTS_RESPONDER_HOST_HH

#include <cstdint>
#include <map>
#include <vector>

extern "C" {
#include "responder.h"
}

class ResponderSink
{
public:
	virtual ~ResponderSink() = default;
	virtual bool ResponderPosted(uint32_t recv, uint32_t rsn_head)
	{
		asked.push_back(recv);
		return recv - rsn_head < posted;
	}
	virtual int ResponderWrite(const mr_rx &) { return 0; }
	virtual int ResponderScatter(const mr_rx &, uint32_t) { return 0; }
	virtual uint8_t ResponderCheckRd(const mr_rx_msg &) { return 0; }
	// An atomic on one 64-bit word per va.
	virtual uint8_t ResponderAtomic(const mr_rx_msg &m, uint64_t *orig)
	{
		uint64_t &w = memory[m.va];
		*orig = w;
		atomics++;
		if (m.opcode == MR_OP_FETCH_ADD)
			w += m.swap_add;
		else if (w == m.compare)
			w = m.swap_add;
		return 0;
	}
	virtual bool ResponderCompleteRecv(const mr_rx_msg &m, uint8_t error)
	{
		if (!posted)
			return false;
		completions.push_back({m.msn, m.rsn, error});
		return true;
	}
	// The completed receive at the head leaves the queue.
	virtual void ResponderRetireRecv()
	{
		posted--;
		retired++;
	}
	virtual void ResponderRefuseLate(uint32_t msn, uint8_t nak)
	{
		refused[msn] = nak;
	}
	virtual void ResponderEvent(mr_responder_event ev, uint32_t arg)
	{
		events[ev]++;
		if (ev == MR_RSE_DROPPED)
			drops[arg]++;
	}

	struct Completion {
		uint32_t msn, rsn;
		uint8_t error;
	};
	uint32_t posted = 1000;
	uint32_t retired = 0;
	uint64_t atomics = 0;
	std::map<uint64_t, uint64_t> memory;
	std::vector<Completion> completions;
	std::vector<uint32_t> asked; // the receives asked for (an SRQ binds)
	std::map<uint32_t, uint8_t> refused;
	std::map<int, uint64_t> events;
	std::map<uint32_t, uint64_t> drops;
	int64_t allocs = 0; // the engine's memory not given back
	bool no_memory = false;
	int64_t maps = 0;	    // slice maps held
	int64_t maps_refused = 0;   // ... and refused (counted by the host)
	bool map_refuse = false;    // the host refuses slice maps (a budget)
};

// The engine and the way back to its sink: standard layout, so a pointer
// to `r` is one to the ResponderHost.
struct ResponderHost {
	mr_responder r;
	ResponderSink *sink;

	static ResponderSink &Of(mr_responder *r)
	{
		return *reinterpret_cast<ResponderHost *>(r)->sink;
	}
};

#endif // METAROCE_PROTO_TESTS_RESPONDER_HOST_HH
