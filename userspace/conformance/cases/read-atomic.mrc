# READ and atomics (protocol.rst, "READ_REQ" .. "ATOMIC_RESP").
section READ_RESP

# A READ is answered by READ_RESP slices of MTU size with the region's bytes.
case read-answered-in-mtu-slices
< READ_REQ msn=0 rkey=$rkey va=$va+100 length=2500
> READ_RESP msn=0 length=2500 offset=0 payload=1024 src=100 path=?a psn=?x
> READ_RESP msn=0 length=2500 offset=1024 payload=1024 src=100 path=?b psn=?y
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=0
< ACK path=$b psn=$y cum_psn=$y+1 msn_done=0
> READ_RESP msn=0 length=2500 offset=2048 payload=452 src=100 within=5

# A zero-length READ gets one response with length 0 and no payload.
case zero-length-read-one-empty-response
< READ_REQ msn=0 rkey=$rkey va=$va length=0
> READ_RESP msn=0 length=0 offset=0 payload=0

# The QP's own READ goes out as one READ_REQ and completes when its
# response slices arrive, in any order, landing the data.
case own-read-completes-on-slices
post_send wr=1 op=read off=4096 len=2048 rkey=0x55 va=0x9000
> READ_REQ msn=0 rkey=0x55 va=0x9000 length=2048 payload=0
< READ_RESP msn=0 length=2048 offset=1024 payload=1024 seed=4 psn=$rq+1
cq none for=5
< READ_RESP msn=0 length=2048 offset=0 payload=1024 seed=4 psn=$rq
cq wr=1 status=success opcode=rdma_read len=2048 within=5
mem off=4096 len=2048 seed=4

# A duplicate response slice counts once.
case own-read-duplicate-slice
post_send wr=1 op=read off=0 len=2048
> READ_REQ msn=0
< READ_RESP msn=0 length=2048 offset=0 payload=1024 path=0
< READ_RESP msn=0 length=2048 offset=0 payload=1024 path=1
cq none for=5
< READ_RESP msn=0 length=2048 offset=1024 payload=1024 path=2
cq wr=1 status=success opcode=rdma_read within=5

# Responses are acknowledged at the path level like requests.
case read-response-acknowledged
post_send wr=1 op=read off=0 len=64
> READ_REQ msn=0
< READ_RESP msn=0 length=64 offset=0 payload=64 flags=ack_req
> ACK cum_psn=$rq+1

section CMP_SWAP, FETCH_ADD

# FETCH_ADD: the response has the word before; memory holds the sum.
case fetch-add-result
< FETCH_ADD msn=0 rkey=$rkey va=$va+64 add=5
> ATOMIC_RESP msn=0 orig=0xfef7f0e9e2dbd4cd
mem off=64 len=8 u64=0xfef7f0e9e2dbd4d2

# CMP_SWAP with a matching compare stores the swap value.
case cmp-swap-match-swaps
< CMP_SWAP msn=0 rkey=$rkey va=$va compare=0x3e373029221b140d swap=0x1122334455667788
> ATOMIC_RESP msn=0 orig=0x3e373029221b140d
mem off=0 len=8 u64=0x1122334455667788

# CMP_SWAP with another compare leaves the word.
case cmp-swap-mismatch-keeps
< CMP_SWAP msn=0 rkey=$rkey va=$va compare=1 swap=0x1122334455667788
> ATOMIC_RESP msn=0 orig=0x3e373029221b140d
mem off=0 len=8 u64=0x3e373029221b140d

# An atomic must not execute twice: a resent FETCH_ADD (same MSN, another
# path) is answered from the saved result, not executed again.
case fetch-add-resent-not-reexecuted
< FETCH_ADD msn=0 rkey=$rkey va=$va+64 add=5 path=0
> ATOMIC_RESP msn=0 orig=0xfef7f0e9e2dbd4cd path=?a psn=?x
< FETCH_ADD msn=0 rkey=$rkey va=$va+64 add=5 path=1
wait 5
mem off=64 len=8 u64=0xfef7f0e9e2dbd4d2

# ...and a resent CMP_SWAP returns the same orig, without swapping again.
case cmp-swap-resent-same-orig
< CMP_SWAP msn=0 rkey=$rkey va=$va compare=0x3e373029221b140d swap=7 path=0
> ATOMIC_RESP msn=0 orig=0x3e373029221b140d path=?a psn=?x
< CMP_SWAP msn=0 rkey=$rkey va=$va compare=7 swap=9 path=1 flags=ack_req
> ATOMIC_RESP msn=0 orig=0x3e373029221b140d within=30
mem off=0 len=8 u64=7

# Atomics execute in MSN order with other requests.
case two-fetch-adds-in-order
< FETCH_ADD msn=0 rkey=$rkey va=$va+64 add=1
> ATOMIC_RESP msn=0 orig=0xfef7f0e9e2dbd4cd
< FETCH_ADD msn=1 rkey=$rkey va=$va+64 add=1
> ATOMIC_RESP msn=1 orig=0xfef7f0e9e2dbd4ce
mem off=64 len=8 u64=0xfef7f0e9e2dbd4cf

section ATOMIC_RESP

# The QP's own FETCH_ADD completes on its ATOMIC_RESP, orig in its buffer.
case own-fetch-add-completes
post_send wr=1 op=faa off=512 len=8 rkey=0x66 va=0x8000 add=3
> FETCH_ADD msn=0 rkey=0x66 va=0x8000 add=3
< ATOMIC_RESP msn=0 orig=0x0102030405060708
cq wr=1 status=success opcode=fetch_add within=5
mem off=512 len=8 u64=0x0102030405060708

# The QP's own CMP_SWAP carries compare and swap and completes on its response.
case own-cmp-swap-completes
post_send wr=1 op=cas off=0 len=8 rkey=0x66 va=0x8008 compare=10 swap=20
> CMP_SWAP msn=0 rkey=0x66 va=0x8008 compare=10 swap=20
< ATOMIC_RESP msn=0 orig=10
cq wr=1 status=success opcode=comp_swap within=5
mem off=0 len=8 u64=10

# A second ATOMIC_RESP for a completed atomic is a duplicate.
case own-atomic-duplicate-response
post_send wr=1 op=faa off=0 len=8 add=1
post_send wr=2 op=write off=0 len=64
> FETCH_ADD msn=0
< ATOMIC_RESP msn=0 orig=1 path=0
cq wr=1 status=success within=5
< ATOMIC_RESP msn=0 orig=2 path=1
wait 1
counter duplicate_packets 1
mem off=0 len=8 u64=1
