# Streams (protocol.rst, "Streams"): the order byte and the stream.
section Streams

# A message that waits for a lost packet holds back only its own stream:
# MSN 1 on stream 2 completes its receive (posted second) while MSN 0 on
# stream 1 misses a slice; then MSN 0 completes, and MSN done passes both.
case stream-completes-past-a-stalled-stream
post_recv wr=1 off=0 len=4096
post_recv wr=2 off=8192 len=4096
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1 stream=1 order=255
< SEND msn=1 rsn=1 payload=64 psn=$rq+2 stream=2 order=255
cq wr=2 status=success len=64
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 psn=$rq stream=1 order=255 flags=ack_req
cq wr=1 status=success len=2048
> ACK cum_psn=$rq+3 msn_done=2

# Within a stream, MSN order: MSN 1 completes after MSN 0, which its
# order byte (0: the message before) names.
case stream-keeps-its-own-order
post_recv wr=1 off=0 len=4096
post_recv wr=2 off=8192 len=4096
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1 stream=1 order=255
< SEND msn=1 rsn=1 payload=64 psn=$rq+2 stream=1 order=0
cq none for=20
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 psn=$rq stream=1 order=255
cq wr=1 status=success len=2048
cq wr=2 status=success len=64

# "order + 1 MSNs before it": MSN 2 with order 1 waits for MSN 0, not 1.
case order-names-a-message-further-back
post_recv wr=1 off=0 len=4096
post_recv wr=2 off=8192 len=4096
post_recv wr=3 off=12288 len=4096
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1 stream=1 order=255
< SEND msn=1 rsn=1 payload=32 psn=$rq+2 stream=2 order=255
< SEND msn=2 rsn=2 payload=64 psn=$rq+3 stream=1 order=1
cq wr=2 status=success len=32
cq none for=20
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 psn=$rq stream=1 order=255
cq wr=1 status=success len=2048
cq wr=3 status=success len=64

# Every packet of a message carries the stream of its first.
case stream-changes-within-a-message
post_recv wr=1 off=0 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 stream=1 order=255
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1 stream=2 order=255
> NAK msn=0 code=invalid_request

# ... and its order byte.
case order-changes-within-a-message
post_recv wr=1 off=0 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 stream=1 order=255
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1 stream=1 order=0
> NAK msn=0 code=invalid_request

# A READ executes when its stream allows, and its response goes at once,
# ahead of a message of another stream that misses a slice.
case stream-read-responds-ahead
< WRITE msn=0 rkey=$rkey va=$va length=2048 offset=1024 payload=1024 psn=$rq+1 stream=1 order=255
< READ_REQ msn=1 rkey=$rkey va=$va+100 length=16 psn=$rq+2 stream=2 order=255
> READ_RESP msn=1 length=16 offset=0 payload=16 src=100
