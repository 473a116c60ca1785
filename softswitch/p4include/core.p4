/* core.p4 for softswitch: the P4_16 core library declarations (written from the P4_16
 * language specification, section "The core library"). */
#ifndef _SOFTSWITCH_CORE_P4_
#define _SOFTSWITCH_CORE_P4_
#define _CORE_P4_  /* the guard name p4c's core.p4 defines; programs test it with #ifdef */

error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

extern packet_in {
    void extract<_HDR>(out _HDR hdr);
    void extract<_HDR>(out _HDR variableSizeHeader, in bit<32> variableFieldSizeInBits);
    _HDR lookahead<_HDR>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

extern packet_out {
    void emit<_HDR>(in _HDR hdr);
}

extern void verify(in bool check, in error toSignal);

/* A compile-time check: a false (or not constant) condition stops the load with the message at
 * the call's position; a true one is the constant true, so it can initialise a constant. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

@noWarn("unused")
action NoAction() {}

match_kind {
    exact,
    ternary,
    lpm
}

#endif
