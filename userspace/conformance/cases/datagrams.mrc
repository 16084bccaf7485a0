# UD_SEND, UD_SEND_IMM: datagrams to and from a UD QP.
section UD_SEND, UD_SEND_IMM (datagrams)

# "delivers a datagram to the oldest posted receive ..., 40 bytes of GRH
# area first": the completion counts them, the payload follows them.
case ud-send-delivered-after-grh
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=0x456 qkey=$qkey payload=100
cq wr=1 status=success opcode=recv len=140
mem off=40 len=100 seed=1

# "over IPv4, 20 zero bytes then its IPv4 header" (over IPv6 the area is
# the IPv6 header: a target reached over IPv6 skips this case).
case ud-grh-ipv4-first-20-zero
needs ipv4
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=0x456 qkey=$qkey payload=8
cq wr=1 status=success len=48
mem off=0 len=8 u64=0
mem off=8 len=8 u64=0
mem off=12 len=8 u64=0

# "to the oldest posted receive": two receives, filled in order.
case ud-oldest-receive-first
qp ud
post_recv wr=1 off=0 len=1024
post_recv wr=2 off=2048 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=16 seed=3
< UD_SEND src_qpn=5 qkey=$qkey payload=16 seed=4
cq wr=1 status=success len=56
cq wr=2 status=success len=56
mem off=40 len=16 seed=3
mem off=2088 len=16 seed=4

# The completion names the sender: src_qp is the source QPN.
case ud-completion-src-qp
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=0xabcdef qkey=$qkey payload=4
cq wr=1 status=success src_qp=0xabcdef

# UD_SEND_IMM: the immediate data in the completion.
case ud-send-imm-delivered
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND_IMM src_qpn=9 qkey=$qkey imm=0xdeadbeef payload=32
cq wr=1 status=success opcode=recv len=72 imm=0xdeadbeef
mem off=40 len=32 seed=1

# An empty datagram: the GRH area alone.
case ud-send-empty
qp ud
post_recv wr=1 off=0 len=64
< UD_SEND src_qpn=9 qkey=$qkey
cq wr=1 status=success len=40

# The largest payload, 4096 bytes.
case ud-send-4096
qp ud
post_recv wr=1 off=0 len=8192
< UD_SEND src_qpn=9 qkey=$qkey payload=4096
cq wr=1 status=success len=4136
mem off=40 len=4096 seed=1

# "dropped, without answer, when ... the Q_Key differs".
case ud-qkey-mismatch-dropped
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey+1 payload=8
> none for=100
counter ud_rx_drop_qkey 1
cq none

# "... or no receive is posted".
case ud-no-receive-dropped
qp ud
< UD_SEND src_qpn=5 qkey=$qkey payload=8
> none for=100
counter ud_rx_drop_no_recv 1
post_recv wr=1 off=0 len=1024
cq none

# "A receive shorter than 40 bytes plus the payload completes with a
# length error": 100 bytes of payload do not fit 120.
case ud-receive-too-short
qp ud
post_recv wr=1 off=0 len=120
< UD_SEND src_qpn=5 qkey=$qkey payload=100
cq wr=1 status=loc_len_err opcode=recv
counter ud_rx_too_long 1

# Exactly 40 + payload fits.
case ud-receive-exact-fit
qp ud
post_recv wr=1 off=0 len=140
< UD_SEND src_qpn=5 qkey=$qkey payload=100
cq wr=1 status=success len=140

# "The only flag allowed is SOLICITED": a solicited datagram is taken.
case ud-solicited-accepted
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=8 flags=solicited
cq wr=1 status=success len=48

# "PSN numbers the sending QP's datagrams (informational: nothing checks
# it)": any PSN is taken.
case ud-any-psn-accepted
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=8 psn=0xffffffff
cq wr=1 status=success len=48

# "It rides no path and is never acknowledged": no ACK for a datagram.
case ud-never-acknowledged
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=8
> none for=100
cq wr=1 status=success

# A UD send WR goes out as UD_SEND: path 0, epoch 0, tag 0, source QPN
# the QP's, the Q_Key the WR names.
case ud-send-wr-on-the-wire
qp ud
post_send wr=1 op=send off=0 len=64 qkey=0x2222
> UD_SEND path=0 epoch=0 tag=0 src_qpn=$qpn qkey=0x2222 payload=64 src=0
cq wr=1 status=success opcode=send

# "A send WR whose Q_Key has the high bit set sends its QP's own Q_Key".
case ud-send-wr-own-qkey
qp ud qkey=0x3333
post_send wr=1 op=send off=0 len=8 qkey=0x80000000
> UD_SEND qkey=0x3333 payload=8

# A send_imm WR goes out as UD_SEND_IMM with its immediate data.
case ud-send-imm-wr-on-the-wire
qp ud
post_send wr=1 op=send_imm off=0 len=16 imm=0x55aa
> UD_SEND_IMM path=0 epoch=0 tag=0 src_qpn=$qpn imm=0x55aa payload=16 src=0

# PSNs number the sending QP's datagrams: one more each.
case ud-psn-numbers-datagrams
qp ud
post_send wr=1 op=send off=0 len=8
post_send wr=2 op=send off=0 len=8
> UD_SEND psn=?n payload=8
> UD_SEND psn=$n+1 payload=8

# A datagram's source port is in the dynamic range too.
case ud-sport-dynamic-range
qp ud
post_send wr=1 op=send off=0 len=8
> UD_SEND sport=49152..65535

# "at most the sender's path MTU": a longer WR is not sent.
case ud-send-wr-over-mtu-refused
qp ud mtu=1024
post_send wr=1 op=send off=0 len=1025
> none UD_SEND for=50
counter ud_tx_too_long 1
