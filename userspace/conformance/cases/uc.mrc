# Unreliable connected (protocol.rst, "Unreliable connected (UC)").
section Unreliable connected (UC)

# A UC QP places a WRITE; its packets are acknowledged at the path level.
case uc-write-placed-and-acked
qp uc
< WRITE msn=0 rkey=$rkey va=$va+128 payload=200 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
mem off=128 len=200 seed=1

# A UC QP places a SEND in its receive.
case uc-send-placed
qp uc
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=300
cq wr=1 status=success opcode=recv len=300
mem off=0 len=300 seed=1

# No NAK: a bad rkey drops the WRITE, counted, and the QP stays in RTS.
case uc-bad-rkey-dropped-no-nak
qp uc
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
> none NAK for=20
counter uc_rx_drop_remote_access 1
state rts
mem off=0 len=64

# No receive posted: the message is dropped (no RNR), counted, complete for MSN done.
case uc-no-receive-dropped
qp uc
< SEND msn=0 rsn=0 payload=64 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
> none NAK for=20
counter uc_rx_drop_no_recv 1

# RSN skips: a message dropped for want of a receive takes none; the next
# takes the receive before the one its RSN names.
case uc-rsn-skip
qp uc
< SEND msn=0 rsn=0 payload=64
post_recv wr=1 off=0 len=1024
< SEND msn=1 rsn=1 payload=80 seed=2
cq wr=1 status=success len=80
mem off=0 len=80 seed=2

# A READ on UC is a failed message: dropped, no NAK, no response.
case uc-read-dropped
qp uc
< READ_REQ msn=0 rkey=$rkey va=$va length=64 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
> none READ_RESP for=20
counter uc_rx_drop_invalid 1

# An atomic on UC likewise.
case uc-atomic-dropped
qp uc
< FETCH_ADD msn=0 rkey=$rkey va=$va add=1 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
> none ATOMIC_RESP for=20
mem off=0 len=8 u64=0x3e373029221b140d

# A SEND longer than its receive fails after taking it: the receive
# completes in error.
case uc-send-too-long
qp uc
post_recv wr=1 off=0 len=32
< SEND msn=0 rsn=0 payload=64 flags=ack_req
> ACK msn_done=1
cq wr=1 status=loc_len_err
counter uc_rx_drop_too_long 1
state rts

# A WRITE_IMM with a bad rkey fails after taking its receive: remote access error.
case uc-write-imm-bad-rkey-completes-in-error
qp uc
post_recv wr=1 off=0 len=128
post_recv wr=2 off=1024 len=128
< WRITE_IMM msn=0 rsn=0 rkey=$rkey+1 va=$va imm=1 payload=64
< SEND msn=1 rsn=1 payload=16
cq wr=1 status=rem_access_err
cq wr=2 status=success len=16

# A message whose slice is lost never completes its receive; MSN done waits.
case uc-lost-slice-no-completion
qp uc
post_recv wr=1 off=0 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=0
cq none for=20

# A UC requester ignores a NAK: its WRITE still completes on MSN done.
case uc-requester-ignores-nak
qp uc
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< NAK msn=0 code=remote_access path=$a psn=$x
state rts
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1
cq wr=1 status=success within=5

# A UC requester never sends READ, atomics or SEND_INV: they are refused.
case uc-requester-no-read
qp uc
post_send wr=1 op=read off=0 len=64 err=EINVAL
