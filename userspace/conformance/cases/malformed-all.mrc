# Malformed packets: each bullet of protocol.rst's list, dropped silently
# (no answer of any kind) and counted. Decode errors map as receive.c
# does: truncation -> rx_drop_short, version -> rx_drop_version, the
# rest -> rx_drop_malformed.
section Malformed packets

# "shorter than the base header plus its opcode header": each opcode's
# headers one byte short.

case truncated-send-header
< SEND msn=0 rsn=0 payload=8 trunc=39
> none for=100
counter rx_drop_short 1

case truncated-send-imm-header
< SEND_IMM msn=0 rsn=0 payload=8 trunc=43
> none for=100
counter rx_drop_short 1

case truncated-send-inv-header
< SEND_INV msn=0 rsn=0 payload=8 trunc=43
> none for=100
counter rx_drop_short 1

case truncated-write-header
< WRITE msn=0 rkey=$rkey va=$va payload=8 trunc=47
> none for=100
counter rx_drop_short 1

case truncated-write-imm-header
< WRITE_IMM msn=0 rkey=$rkey va=$va payload=8 trunc=55
> none for=100
counter rx_drop_short 1

case truncated-read-req-header
< READ_REQ msn=0 rkey=$rkey va=$va length=8 trunc=43
> none for=100
counter rx_drop_short 1

case truncated-cmp-swap-header
< CMP_SWAP msn=0 rkey=$rkey va=$va trunc=55
> none for=100
counter rx_drop_short 1

case truncated-fetch-add-header
< FETCH_ADD msn=0 rkey=$rkey va=$va trunc=47
> none for=100
counter rx_drop_short 1

case truncated-read-resp-header
< READ_RESP msn=0 payload=8 trunc=35
> none for=100
counter rx_drop_short 1

case truncated-atomic-resp-header
< ATOMIC_RESP msn=0 trunc=35
> none for=100
counter rx_drop_short 1

case truncated-ack-header
< ACK psn=$sq-1 cum_psn=$sq trunc=71
> none for=100
counter rx_drop_short 1

case truncated-nak-header
< NAK msn=0 code=rnr trunc=31
> none for=100
counter rx_drop_short 1

case truncated-hello-header
< HELLO src_tag=$ptag trunc=39
> none for=100
counter rx_drop_short 1

# UD_SEND and UD_SEND_IMM, one byte short, at a UD QP.

case truncated-ud-send-header
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey trunc=31
> none for=100
counter rx_drop_short 1
cq none

case truncated-ud-send-imm-header
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND_IMM src_qpn=5 qkey=$qkey trunc=35
> none for=100
counter rx_drop_short 1
cq none
# Short of the base header itself.
case shorter-than-base-header
< SEND msn=0 rsn=0 payload=8 trunc=23
> none for=100
counter rx_drop_short 1

# "has another version": 0 and 3 (1 is in malformed.mrc).
case version-0
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 version=0 flags=ack_req
> none for=100
counter rx_drop_version 1
cq none

case version-3
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 version=3 flags=ack_req
> none for=100
counter rx_drop_version 1
cq none

# "an unknown opcode": 0x00, a gap (0x12), past HELLO (0x23), 0xff.
case unknown-opcode-0x00
< 0x00 extra=16
> none for=100
counter rx_drop_malformed 1

case unknown-opcode-0x12
< 0x12 extra=48
> none for=100
counter rx_drop_malformed 1

case unknown-opcode-0x23
< 0x23 extra=16
> none for=100
counter rx_drop_malformed 1

case unknown-opcode-0xff
< 0xff extra=16
> none for=100
counter rx_drop_malformed 1

# "an undefined flag": 0x10 and 0x80 on a SEND.
case undefined-flag-0x10
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req|0x10
> none for=100
counter rx_drop_malformed 1
cq none

case undefined-flag-0x80
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req|0x80
> none for=100
counter rx_drop_malformed 1
cq none

# "one the opcode may not carry": SOLICITED on WRITE.
case solicited-on-write
< WRITE msn=0 rkey=$rkey va=$va payload=8 flags=ack_req|solicited
> none for=100
counter rx_drop_malformed 1
mem off=0 len=8

# SOLICITED on READ_REQ.
case solicited-on-read-req
< READ_REQ msn=0 rkey=$rkey va=$va length=8 flags=ack_req|solicited
> none for=100
counter rx_drop_malformed 1

# SOLICITED on FETCH_ADD.
case solicited-on-fetch-add
< FETCH_ADD msn=0 rkey=$rkey va=$va add=1 flags=solicited
> none for=100
counter rx_drop_malformed 1

# SOLICITED on CMP_SWAP.
case solicited-on-cmp-swap
< CMP_SWAP msn=0 rkey=$rkey va=$va flags=solicited
> none for=100
counter rx_drop_malformed 1

# SOLICITED on READ_RESP.
case solicited-on-read-resp
< READ_RESP msn=0 payload=8 flags=solicited
> none for=100
counter rx_drop_malformed 1

# ACK_REQ on an ACK ("Flags must be zero").
case ack-req-on-ack
< ACK psn=$sq-1 cum_psn=$sq flags=ack_req
> none for=100
counter rx_drop_malformed 1

# WINDOW_LIMITED on an ACK.
case window-limited-on-ack
< ACK psn=$sq-1 cum_psn=$sq flags=window_limited
> none for=100
counter rx_drop_malformed 1

# ACK_REQ on a NAK.
case ack-req-on-nak
< NAK msn=0 code=remote_access flags=ack_req
> none for=100
counter rx_drop_malformed 1

# ACK_REQ on a HELLO.
case ack-req-on-hello
< HELLO tag=0 src_tag=$ptag flags=ack_req
> none for=100
counter rx_drop_malformed 1

# ACK_REQ on a datagram ("The only flag allowed is SOLICITED").
case ack-req-on-ud-send
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=8 flags=ack_req
> none for=100
counter rx_drop_malformed 1
cq none

# "ENCRYPTED ... a receiver without encryption drops as malformed".
case encrypted-without-key
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req|encrypted
> none for=100
counter rx_drop_malformed 1
cq none

# "a non-zero reserved field": byte 4 (order) outside a request: the
# WRITE's ACK is dropped, and the WRITE does not complete.
case reserved-byte-4
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1 order=1
> none ACK for=100
counter rx_drop_malformed 1
cq none

# Bytes 14-15 (stream) outside a request, high byte.
case reserved-bytes-14-high
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1 stream=0x100
> none ACK for=100
counter rx_drop_malformed 1
cq none

# Bytes 14-15, low byte, in a NAK.
case reserved-bytes-14-low
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< NAK msn=0 path=$p psn=$n code=remote_access stream=1
> none ACK for=100
counter rx_drop_malformed 1
cq none

# NAK byte 29 (reserved, "Zero").
case nak-reserved-byte-29
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< NAK msn=0 path=$p psn=$n code=remote_access rsvd29=1
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# "a path id of 64 or more".
case path-64
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req path=64
> none for=100
counter rx_drop_malformed 1
cq none

case path-255
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req path=255
> none for=100
counter rx_drop_malformed 1
cq none

# "(UD_SEND*) has a path ... other than zero".
case ud-path-nonzero
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=8 path=1
> none for=100
counter rx_drop_malformed 1
cq none

# ... an epoch other than zero.
case ud-epoch-nonzero
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=5 qkey=$qkey payload=8 epoch=1
> none for=100
counter rx_drop_malformed 1
cq none

# ... a tag other than zero.
case ud-tag-nonzero
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND_IMM src_qpn=5 qkey=$qkey payload=8 tag=0x1234
> none for=100
counter rx_drop_malformed 1
cq none

# ... "or a source QPN above 24 bits".
case ud-src-qpn-above-24-bits
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=0x1000000 qkey=$qkey payload=8
> none for=100
counter rx_drop_malformed 1
cq none

# "(any other opcode but HELLO) has a zero tag": an ACK.
case zero-tag-ack
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1 tag=0
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# A READ_REQ with a zero tag.
case zero-tag-read-req
< READ_REQ msn=0 rkey=$rkey va=$va length=8 flags=ack_req tag=0
> none for=100
counter rx_drop_malformed 1

# "(HELLO) has a PSN ... other than zero".
case hello-psn-nonzero
< HELLO tag=0 src_tag=$ptag psn=1
> none for=100
counter rx_drop_malformed 1

# ... an epoch other than zero.
case hello-epoch-nonzero
< HELLO tag=0 src_tag=$ptag epoch=1
> none for=100
counter rx_drop_malformed 1

# ... "a zero source tag".
case hello-zero-src-tag
< HELLO tag=$tag src_tag=0
> none for=100
counter rx_drop_malformed 1

# ... "an undefined HELLO flag".
case hello-undefined-flag
< HELLO tag=0 src_tag=$ptag hflags=4
> none for=100
counter rx_drop_malformed 1

case hello-undefined-flag-high
< HELLO tag=0 src_tag=$ptag hflags=0x80000000
> none for=100
counter rx_drop_malformed 1

# ... "or KNOWN with a zero tag".
case hello-known-zero-tag
< HELLO tag=0 src_tag=$ptag hflags=known
> none for=100
counter rx_drop_malformed 1

# "carries a payload although its opcode has none": READ_REQ.
case payload-on-read-req
< READ_REQ msn=0 rkey=$rkey va=$va length=8 flags=ack_req extra=4
> none for=100
counter rx_drop_malformed 1

# ... FETCH_ADD.
case payload-on-fetch-add
< FETCH_ADD msn=0 rkey=$rkey va=$va add=1 flags=ack_req extra=8
> none for=100
counter rx_drop_malformed 1
mem off=0 len=8

# ... ACK.
case payload-on-ack
< ACK psn=$sq-1 cum_psn=$sq extra=4
> none for=100
counter rx_drop_malformed 1

# ... HELLO.
case payload-on-hello
< HELLO tag=0 src_tag=$ptag extra=4
> none for=100
counter rx_drop_malformed 1

# ... "or more than 4096 bytes".
case payload-over-4096
post_recv wr=1 off=0 len=8192
< SEND msn=0 rsn=0 payload=4097 flags=ack_req
> none for=100
counter rx_drop_malformed 1
cq none

case ud-payload-over-4096
qp ud
post_recv wr=1 off=0 len=8192
< UD_SEND src_qpn=5 qkey=$qkey payload=4097
> none for=100
counter rx_drop_malformed 1
cq none

# "(SEND*, WRITE*, READ_RESP) has a message length above 2^31".
case send-length-above-2-31
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 length=0x80000001 payload=8 flags=ack_req
> none for=100
counter rx_drop_malformed 1
cq none

case write-length-above-2-31
< WRITE msn=0 rkey=$rkey va=$va length=0x80000001 payload=8 flags=ack_req
> none for=100
counter rx_drop_malformed 1

# 2^31 itself is allowed: well-formed, refused at the message level.
case write-length-2-31-not-malformed
< WRITE msn=0 rkey=$rkey va=$va length=0x80000000 payload=8 flags=ack_req
> NAK msn=0
counter rx_drop_malformed 0

# READ_REQ: "Bytes to read, at most 2^31".
case read-req-length-above-2-31
< READ_REQ msn=0 rkey=$rkey va=$va length=0x80000001 flags=ack_req
> none for=100
counter rx_drop_malformed 1

# "a payload that does not lie inside [0, length) at offset": past the end.
case payload-past-length
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 length=8 payload=16 flags=ack_req
> none for=100
counter rx_drop_malformed 1
cq none

# ... at an offset that puts its end past the length.
case payload-offset-past-length
< WRITE msn=0 rkey=$rkey va=$va length=16 offset=12 payload=8 flags=ack_req
> none for=100
counter rx_drop_malformed 1
mem off=0 len=32

# ... READ_RESP past its length.
case read-resp-past-length
< READ_RESP msn=0 length=4 payload=8
> none for=100
counter rx_drop_malformed 1

# "or no payload although the length is not zero".
case no-payload-length-nonzero
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 length=8 flags=ack_req
> none for=100
counter rx_drop_malformed 1
cq none

# "(WRITE*, READ_REQ, atomics) names a remote range that wraps".
case write-range-wraps
< WRITE msn=0 rkey=$rkey va=0xfffffffffffffff8 length=16 payload=16 flags=ack_req
> none for=100
counter rx_drop_malformed 1

case read-req-range-wraps
< READ_REQ msn=0 rkey=$rkey va=0xffffffffffffff00 length=0x200 flags=ack_req
> none for=100
counter rx_drop_malformed 1

case cmp-swap-range-wraps
< CMP_SWAP msn=0 rkey=$rkey va=0xfffffffffffffffc flags=ack_req
> none for=100
counter rx_drop_malformed 1

case fetch-add-range-wraps
< FETCH_ADD msn=0 rkey=$rkey va=0xfffffffffffffff9 add=1 flags=ack_req
> none for=100
counter rx_drop_malformed 1

# "(ACK) has SACK bit 0 set": cum itself reported.
case ack-sack-bit-0
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< ACK path=$p psn=$n cum_psn=$n sack=$n msn_done=1
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# "or a PSN the ACK does not report as arrived".
case ack-psn-not-reported
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< ACK path=$p psn=$n+2 cum_psn=$n+1 sack=$n+3 msn_done=1
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# "(NAK) has an unknown code": 0.
case nak-code-0
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< NAK path=$p psn=$n msn=0 code=0
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# ... 4.
case nak-code-4
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< NAK path=$p psn=$n msn=0 code=4
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# "or an RNR delay with another code".
case nak-rnr-delay-other-code
post_send wr=1 op=write off=0 len=16 rkey=1 va=0
> WRITE msn=0 path=?p psn=?n
< NAK path=$p psn=$n msn=0 code=remote_access rnr_delay=5
> none ACK for=100    # the WRITE's resends only
counter rx_drop_malformed 1
cq none for=5

# "Everything else that is wrong (unknown QPN ...) is well-formed": no such
# QP is its own drop, not malformed.
case unknown-qpn
< SEND msn=0 rsn=0 payload=8 flags=ack_req qpn=$qpn+0x100
> none for=100
counter rx_drop_no_qp 1
counter rx_drop_malformed 0

# A datagram to an RC QP finds no UD QP.
case datagram-to-rc-qp
< UD_SEND src_qpn=5 qkey=$qkey payload=8
> none for=100
counter rx_drop_no_qp 1

# An RC request to a UD QP finds no RC QP.
case send-to-ud-qp
qp ud
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=8 flags=ack_req tag=1
> none for=100
counter rx_drop_no_qp 1
cq none
