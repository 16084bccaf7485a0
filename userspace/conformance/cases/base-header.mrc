# Base header, Opcodes, Flags: the headers of what the QP sends.
section Base header

# "version: 2", "dest QPN": the peer's, "tag": the receiver's (ours);
# a QP without streams sends stream 0, each message after the one before.
case send-version-qpn-tag
post_send wr=1 op=send off=0 len=16
> SEND version=2 qpn=$peer_qpn tag=$ptag order=0 stream=0 payload=16

# An ACK names the peer's QPN and carries its tag.
case ack-version-qpn-tag
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=16 flags=ack_req
> ACK version=2 qpn=$peer_qpn tag=$ptag order=0 stream=0

# A NAK too.
case nak-version-qpn-tag
< WRITE msn=0 rkey=$rkey+1 va=$va payload=16 flags=ack_req
> NAK version=2 qpn=$peer_qpn tag=$ptag rsvd29=0

# "path: 0-63" and "epoch" 0 on a fresh connection, PSN from the initial.
case first-packet-path-epoch-psn
post_send wr=1 op=send off=0 len=16
> SEND path=0..63 epoch=0 psn=$sq

# The HELLOs before the tag is known carry tag 0.
case hello-before-tag-zero
qp rc no_handshake
> HELLO tag=0 version=2 qpn=$peer_qpn

section Opcodes

# SEND: 16-byte opcode header (the decoder takes the rest as payload).
case send-header-length
post_send wr=1 op=send off=0 len=100
> SEND payload=100 src=0 length=100

# SEND_IMM: 20 bytes.
case send-imm-header-length
post_send wr=1 op=send_imm off=0 len=100 imm=0x1234
> SEND_IMM payload=100 src=0 imm=0x1234

# SEND_INV: 20 bytes, inv_rkey at 40.
case send-inv-header-length
post_send wr=1 op=send_inv off=0 len=100 inv_rkey=0x4321
> SEND_INV payload=100 src=0 inv_rkey=0x4321

# WRITE: 24 bytes.
case write-header-length
post_send wr=1 op=write off=8 len=100 rkey=0x77 va=0x123456789
> WRITE payload=100 src=8 rkey=0x77 va=0x123456789 length=100

# WRITE_IMM: 32 bytes, imm at 52.
case write-imm-header-length
post_send wr=1 op=write_imm off=0 len=100 rkey=0x77 va=0x1000 imm=0xfeed
> WRITE_IMM payload=100 src=0 imm=0xfeed rsn=0

# READ_REQ: 20 bytes, no payload.
case read-req-no-payload
post_send wr=1 op=read off=0 len=300 rkey=0x77 va=0x1000
> READ_REQ payload=0 length=300 rkey=0x77 va=0x1000

# CMP_SWAP: 32 bytes, no payload.
case cmp-swap-no-payload
post_send wr=1 op=cas off=0 len=8 rkey=0x77 va=0x1000 compare=5 swap=6
> CMP_SWAP payload=0 compare=5 swap=6

# FETCH_ADD: 24 bytes, no payload.
case fetch-add-no-payload
post_send wr=1 op=faa off=0 len=8 rkey=0x77 va=0x1000 add=9
> FETCH_ADD payload=0 add=9

# ATOMIC_RESP: 12 bytes, no payload, orig the word before.
case atomic-resp-no-payload
< FETCH_ADD msn=0 rkey=$rkey va=$va add=1 flags=ack_req
> ATOMIC_RESP payload=0 msn=0 orig=?o

# ACK: 48 bytes, no payload.
case ack-no-payload
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK payload=0

# NAK: 8 bytes, no payload.
case nak-no-payload
< WRITE msn=0 rkey=$rkey+1 va=$va payload=8 flags=ack_req
> NAK payload=0 code=remote_access

section Flags

# "SOLICITED: allowed on SEND": a solicited SEND WR sets it.
case solicited-send
post_send wr=1 op=send off=0 len=16 solicited
> SEND flags=2..3 payload=16    # SOLICITED, maybe ACK_REQ

# A SEND WR without solicited does not set it.
case unsolicited-send-no-flag
post_send wr=1 op=send off=0 len=16
> SEND flags=0..1 payload=16

# "Allowed on ... WRITE_IMM": a solicited WRITE_IMM WR sets it.
case solicited-write-imm
post_send wr=1 op=write_imm off=0 len=16 rkey=1 va=0 imm=1 solicited
> WRITE_IMM flags=2..3

# Not allowed on WRITE: a solicited WRITE WR goes without it.
case write-never-solicited
post_send wr=1 op=write off=0 len=16 rkey=1 va=0 solicited
> WRITE flags=0..1

# "ACK ... Flags must be zero."
case ack-flags-zero
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK flags=0

# "NAK ... Flags must be zero."
case nak-flags-zero
< WRITE msn=0 rkey=$rkey+1 va=$va payload=8 flags=ack_req
> NAK flags=0

# ACK_REQ is not allowed on HELLO: the QP's HELLOs carry no flags.
case hello-flags-zero
qp rc no_handshake
> HELLO flags=0

# "The only flag allowed is SOLICITED" on datagrams.
case ud-send-solicited-only
qp ud
post_send wr=1 op=send off=0 len=16 solicited
> UD_SEND flags=solicited

# "WINDOW_LIMITED: allowed where ACK_REQ is": a SEND with it is taken.
case window-limited-accepted-on-send
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req|window_limited
> ACK cum_psn=$rq+1
cq wr=1 status=success len=8
