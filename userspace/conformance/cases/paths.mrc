# Paths, epochs and their windows (protocol.rst, "Paths").
section Paths

# In epoch 0 a path's PSN space starts at the connection's initial PSN.
case epoch0-starts-at-initial-psn
< WRITE msn=0 rkey=$rkey va=$va payload=64 path=3 psn=$rq flags=ack_req
> ACK path=3 epoch=0 cum_psn=$rq+1 sack=none

# Path ids 0..63 are separate windows: each path gets its own ACK and cum.
case paths-separate-windows
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 path=0 psn=$rq flags=ack_req
> ACK path=0 cum_psn=$rq+1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 path=1 psn=$rq+1 flags=ack_req
> ACK path=1 psn=$rq+1 cum_psn=$rq sack=$rq+1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=2048 payload=1024 path=0 psn=$rq+1 flags=ack_req
> ACK path=0 psn=$rq+1 cum_psn=$rq+2 sack=none

# The highest path id, 63, is a path like any other.
case path-63-acked
< WRITE msn=0 rkey=$rkey va=$va payload=64 path=63 flags=ack_req
> ACK path=63 cum_psn=$rq+1

# A path id of 64 or more is malformed: dropped silently.
case path-64-malformed
< WRITE msn=0 rkey=$rkey va=$va payload=64 path=64 psn=$rq flags=ack_req
> none for=50
counter rx_drop_malformed 1

# The QP sprays a message's packets: while fewer are in flight than it
# has paths, in runs of 4 on a path; the fifth goes to another path (its
# first PSN), since that path has fewer packets in flight.
case message-sprayed-over-paths
post_send wr=1 op=write off=0 len=5120
> WRITE offset=0 path=?a psn=$sq
> WRITE offset=1024 path=$a psn=$sq+1
< ACK path=$a psn=$sq+1 cum_psn=$sq+2 msn_done=0
> WRITE offset=2048 path=$a psn=$sq+2
> WRITE offset=3072 path=$a psn=$sq+3
< ACK path=$a psn=$sq+3 cum_psn=$sq+4 msn_done=0
> WRITE offset=4096 path=!$a psn=$sq

# The QP's data packets are sent ECT(0).
case data-sent-ect0
post_send wr=1 op=write off=0 len=64
> WRITE ect=1 payload=64

# An ACK for another epoch of a path than the sender's current one is not
# taken: the message does not complete.
case ack-of-other-epoch-ignored
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x epoch=0
< ACK path=$a epoch=1 psn=0 cum_psn=1 msn_done=1
cq none for=5
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1
cq wr=1 status=success within=1

section Path failure and restart

# A packet of a newer epoch resets the path's window to that epoch's first
# PSN (0) before it is recorded.
case newer-epoch-resets-window
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 flags=ack_req
> ACK epoch=0 cum_psn=$rq+1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 epoch=1 psn=0 flags=ack_req
> ACK path=0 epoch=1 psn=0 cum_psn=1 sack=none

# In a new epoch the window starts at 0: a packet at PSN 2 leaves 0 and 1 holes.
case newer-epoch-window-from-zero
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 epoch=2 psn=2 flags=ack_req
> ACK path=0 epoch=2 psn=2 cum_psn=0 sack=2

# A packet of an older epoch is stale: dropped without an ACK.
case older-epoch-dropped-without-ack
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 epoch=1 psn=0 flags=ack_req
> ACK epoch=1 cum_psn=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 epoch=0 psn=$rq flags=ack_req seed=3
> none for=50
mem off=1024 len=1024

# Epochs compare as 16-bit serial numbers: 0xffff is before 0, so stale.
case epoch-serial-wrap-stale
< WRITE msn=0 rkey=$rkey va=$va payload=64 epoch=0xffff psn=0 flags=ack_req
> none for=50
mem off=0 len=64

# ...and an epoch 2^15 ahead of the current one is before it too.
case epoch-serial-half-stale
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 epoch=3 psn=0 flags=ack_req
> ACK epoch=3 cum_psn=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 epoch=0x8003 psn=0 flags=ack_req
> none for=50

# A newer epoch on one path leaves the other paths' windows alone.
case epoch-per-path
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=1024 path=1 flags=ack_req
> ACK path=1 epoch=0 cum_psn=$rq+1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=1024 payload=1024 path=2 epoch=1 psn=0 flags=ack_req
> ACK path=2 epoch=1 cum_psn=1
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=2048 payload=1024 path=1 flags=ack_req
> ACK path=1 epoch=0 cum_psn=$rq+2

# After repeated timeouts the path fails: its packet moves to another path
# with a new PSN of that path, and is acknowledged there.
case failed-path-packet-moved
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=0 psn=$sq
counter path_failovers >=1 within=1000
> WRITE msn=0 path=1 psn=$sq epoch=0 within=1000
< ACK path=1 psn=$sq cum_psn=$sq+1 msn_done=1
cq wr=1 status=success within=5

# "A path fails after N consecutive retransmission timeouts" (N = 3): the
# tail probe and the first two RTOs resend on the same path, same PSN.
case path-survives-two-rtos
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?p psn=?n
> WRITE msn=0 path=$p psn=$n within=200
> WRITE msn=0 path=$p psn=$n within=400
> WRITE msn=0 path=$p psn=$n within=800

# "restarts the path: a new source port, epoch + 1": once the failed path
# is used again, its packets carry epoch 1 from PSN 0, from another port.
# (The peer answers only the first move: the later writes go in runs of 4
# from path to path as each fails, until path 0's turn comes again.)
case restarted-path-new-epoch
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=0 epoch=0 psn=$sq sport=?port
counter path_failovers >=1 within=1000
> WRITE msn=0 path=!0 epoch=0 path=?q psn=?m within=1000
< ACK path=$q psn=$m cum_psn=$m+1 msn_done=1
cq wr=1 status=success
post_send wr=2 op=write off=0 len=64
post_send wr=3 op=write off=0 len=64
post_send wr=4 op=write off=0 len=64
post_send wr=5 op=write off=0 len=64
post_send wr=6 op=write off=0 len=64
post_send wr=7 op=write off=0 len=64
post_send wr=8 op=write off=0 len=64
post_send wr=9 op=write off=0 len=64
post_send wr=10 op=write off=0 len=64
post_send wr=11 op=write off=0 len=64
post_send wr=12 op=write off=0 len=64
post_send wr=13 op=write off=0 len=64
post_send wr=14 op=write off=0 len=64
post_send wr=15 op=write off=0 len=64
post_send wr=16 op=write off=0 len=64
post_send wr=17 op=write off=0 len=64
> WRITE path=0 epoch=1 psn=0 sport=!$port within=20000
