# The connection tag handshake (protocol.rst, "HELLO").
section HELLO

# A QP in RTS asks for the peer's tag: its own as source, no tag of ours.
case first-hello
qp rc no_handshake
> HELLO tag=0 hflags=0 psn=0 epoch=0 src_tag=?tag

# Unanswered, it asks again.
case hello-retried
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
> HELLO tag=0 src_tag=$tag within=500

# A proven HELLO without KNOWN is answered with REPLY and KNOWN.
case proven-hello-answered
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=$tag src_tag=$ptag hflags=0
> HELLO tag=$ptag src_tag=$tag hflags=reply|known

# A proven REPLY with KNOWN ends the handshake and is not answered.
case proven-reply-known-not-answered
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=$tag src_tag=$ptag hflags=reply|known
> none HELLO hflags=reply|known for=300
