# Congestion signals and the receiver's help (protocol.rst, "Congestion control").
section Signals

# The receiver counts CE-marked packets of a path epoch in every ACK.
case ce-counted-in-ack
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req ce
> ACK cum_psn=$rq+1 ecn_count=1
counter ce_marks 1

# Unmarked packets add nothing to the count.
case no-ce-count-zero
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+1 ecn_count=0
counter ce_marks 0

# The count accumulates over the path epoch's marked packets.
case ce-count-accumulates
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 flags=ack_req ce
> ACK cum_psn=$rq+1 ecn_count=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 flags=ack_req
> ACK cum_psn=$rq+2 ecn_count=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=2048 payload=1024 flags=ack_req ce
> ACK cum_psn=$rq+3 ecn_count=2

# Duplicates count too: "the packets of a path epoch that arrive marked CE,
# duplicates included".
case ce-counts-duplicates
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req ce
> ACK cum_psn=$rq+1 ecn_count=1
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq ce
> ACK cum_psn=$rq+1 ecn_count=2
counter ce_marks 2

# The count is per path epoch: another path's ACK does not carry it.
case ce-count-per-path
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 path=0 flags=ack_req ce
> ACK path=0 ecn_count=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 path=1 flags=ack_req
> ACK path=1 ecn_count=0

# A new epoch starts a new count.
case ce-count-reset-new-epoch
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 flags=ack_req ce
> ACK epoch=0 ecn_count=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 epoch=1 psn=0 flags=ack_req
> ACK epoch=1 cum_psn=1 ecn_count=0

# The first packet of a new epoch counts in that epoch when marked.
case ce-count-new-epoch-marked
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 flags=ack_req ce
> ACK epoch=0 ecn_count=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 epoch=1 psn=0 flags=ack_req ce
> ACK epoch=1 cum_psn=1 ecn_count=1

# A packet beyond the window is dropped silently, marked or not.
case ce-beyond-window-no-ack
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq+300 flags=ack_req ce
> none ACK for=50

# WINDOW_LIMITED is allowed where ACK_REQ is: on a WRITE it is taken.
case window-limited-write-accepted
< WRITE msn=0 rkey=$rkey va=$va+256 payload=128 flags=ack_req|window_limited
> ACK cum_psn=$rq+1 msn_done=1
mem off=256 len=128 seed=1

# ...on a SEND.
case window-limited-send-accepted
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=100 flags=window_limited
> ACK cum_psn=$rq+1 msn_done=1
cq wr=1 status=success opcode=recv len=100

# ...on a READ_REQ.
case window-limited-read-accepted
< READ_REQ msn=0 rkey=$rkey va=$va+64 length=64 flags=window_limited
> READ_RESP msn=0 length=64 offset=0 payload=64 src=64

# ...but not on an ACK, whose flags must be zero: malformed, dropped.
case window-limited-on-ack-malformed
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1 flags=window_limited
cq none for=5
counter rx_drop_malformed 1

# The sender counts the difference of ECN counts: a mark shrinks the path's
# window (a decrease).
case ce-echo-decreases-window
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1 ecn_count=1
cq wr=1 status=success within=1
counter cc_decreases >=1

section The rate hint

# Every ACK carries the receiver's share for the sender, or 0 for none.
case hint-in-every-ack
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+1 rate_hint=*
< WRITE msn=1 rkey=$rkey va=$va payload=64 psn=$rq+5 flags=ack_req
> ACK cum_psn=$rq+1 sack=$rq+5 rate_hint=*

# The hint in an ACK from the QP is accepted by the sender at any value.
case hint-zero-accepted
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1 rate_hint=0
cq wr=1 status=success within=1

case hint-large-accepted
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1 rate_hint=0xffffffff
cq wr=1 status=success within=1
