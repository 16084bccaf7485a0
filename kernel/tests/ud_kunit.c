// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: address vectors as AHs and RC QPs take them (ah.c), and the GRH
 * area of a UD receive (ud.c). Datagrams on the wire are covered by
 * selftests/tests/35-ud.sh.
 */
#include <kunit/test.h>
#include <linux/ip.h>

#include "../ah.h"
#include "../socket.h"
#include "../ud.h"
#include "verbs_fixture.h"

/* A RoCE v2 vector from v4-mapped source @s to destination @d. */
static void ud_av(struct rdma_ah_attr *ah, struct ib_gid_attr *sgid,
		  const struct in6_addr *s, const struct in6_addr *d)
{
	memset(ah, 0, sizeof(*ah));
	memset(sgid, 0, sizeof(*sgid));
	sgid->gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP;
	memcpy(sgid->gid.raw, s, sizeof(*s));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	ah->port_num = MR_PORT;
	ah->ah_flags = IB_AH_GRH;
	ah->grh.sgid_attr = sgid;
	memcpy(ah->grh.dgid.raw, d, sizeof(*d));
}

static void ud_av_to_flow(struct kunit *test)
{
	struct mr_dev *dev = mr_test_dev(test);
	struct in6_addr a, b, v6, mc;
	struct rdma_ah_attr ah;
	struct ib_gid_attr sgid;
	struct mr_flow flow;

	ipv6_addr_set_v4mapped(htonl(0x0a000001), &a);
	ipv6_addr_set_v4mapped(htonl(0x0a000002), &b);
	ipv6_addr_set(&v6, htonl(0xfd000000), 0, 0, htonl(1));
	ipv6_addr_set(&mc, htonl(0xff020000), 0, 0, htonl(1));

	ud_av(&ah, &sgid, &a, &b);
	KUNIT_ASSERT_EQ(test, mr_ah_av_to_flow(dev, &ah, &flow), 0);
	KUNIT_EXPECT_TRUE(test, ipv6_addr_equal(&flow.saddr, &a));
	KUNIT_EXPECT_TRUE(test, ipv6_addr_equal(&flow.daddr, &b));
	KUNIT_EXPECT_EQ(test, flow.sport, 0);

	ud_av(&ah, &sgid, &a, &v6);
	KUNIT_EXPECT_EQ(test, mr_ah_av_to_flow(dev, &ah, &flow), -EINVAL);
	ud_av(&ah, &sgid, &v6, &mc);
	KUNIT_EXPECT_EQ(test, mr_ah_av_to_flow(dev, &ah, &flow), -EINVAL);
	ud_av(&ah, &sgid, &a, &b);
	ah.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, mr_ah_av_to_flow(dev, &ah, &flow), -EINVAL);
	ud_av(&ah, &sgid, &a, &b);
	sgid.gid_type = IB_GID_TYPE_ROCE;
	KUNIT_EXPECT_EQ(test, mr_ah_av_to_flow(dev, &ah, &flow), -EINVAL);
	ud_av(&ah, &sgid, &a, &b);
	ah.port_num = 2;
	KUNIT_EXPECT_EQ(test, mr_ah_av_to_flow(dev, &ah, &flow), -EINVAL);
}

/* IPv4: 20 zero bytes, then the header as it came; IPv6: the header. */
static void ud_grh_layout(struct kunit *test)
{
	union rdma_network_hdr grh;
	struct sk_buff *skb;
	struct ipv6hdr *ip6;
	struct iphdr *ip;
	u8 zero[20] = {};

	skb = alloc_skb(128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reset_network_header(skb);
	ip = skb_put_zero(skb, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = htonl(0x0a000001);
	skb->protocol = htons(ETH_P_IP);
	KUNIT_EXPECT_EQ(test, mr_ud_grh(skb, &grh), RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, memcmp(&grh, zero, sizeof(zero)), 0);
	KUNIT_EXPECT_EQ(test, memcmp((u8 *)&grh + 20, ip, sizeof(*ip)), 0);
	kfree_skb(skb);

	skb = alloc_skb(128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reset_network_header(skb);
	ip6 = skb_put_zero(skb, sizeof(*ip6));
	ip6->version = 6;
	ip6->nexthdr = IPPROTO_UDP;
	ip6->saddr.s6_addr[0] = 0xfd;
	skb->protocol = htons(ETH_P_IPV6);
	KUNIT_EXPECT_EQ(test, mr_ud_grh(skb, &grh), RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, sizeof(grh), 40UL);
	KUNIT_EXPECT_EQ(test, memcmp(&grh, ip6, sizeof(*ip6)), 0);
	kfree_skb(skb);
}

static struct kunit_case ud_cases[] = {
	KUNIT_CASE(ud_av_to_flow),
	KUNIT_CASE(ud_grh_layout),
	{}
};

static struct kunit_suite ud_suite = {
	.name = "metaroce-ud",
	.test_cases = ud_cases,
};

kunit_test_suite(ud_suite);
