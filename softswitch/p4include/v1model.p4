/* v1model.p4 for softswitch: the v1model architecture declarations (written from the
 * v1model architecture description and bmv2 simple_switch documentation). */
#ifndef _SOFTSWITCH_V1MODEL_P4_
#define _SOFTSWITCH_V1MODEL_P4_
#define _V1_MODEL_P4_  /* the guard name p4c's v1model.p4 defines */

#include <core.p4>

/* As p4c's v1model.p4: a program may choose the version by defining V1MODEL_VERSION before the
 * include; PortId_t exists from version 20200408 on (a program may declare its own before). */
#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

match_kind {
    range,
    optional,
    selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
#endif

@metadata @name("standard_metadata")
struct standard_metadata_t {
    bit<9>   ingress_port;
    bit<9>   egress_spec;
    bit<9>   egress_port;
    bit<32>  instance_type;
    bit<32>  packet_length;
    @alias("queueing_metadata.enq_timestamp") bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta") bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")    bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp") bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")  bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")  bit<16> mcast_grp;
    @alias("intrinsic_metadata.egress_rid") bit<16> egress_rid;
    bit<1>   checksum_error;
    error    parser_error;
    @alias("intrinsic_metadata.priority") bit<3> priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

extern counter<_I> {
    counter(bit<32> size, CounterType type);
    void count(in _I index);
}

extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

extern meter<_I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<_T>(in _I index, out _T result);
}

extern direct_meter<_T> {
    direct_meter(MeterType type);
    void read(out _T result);
}

extern register<_T, _I> {
    register(bit<32> size);
    @noSideEffects void read(out _T result, in _I index);
    void write(in _I index, in _T value);
}

extern action_profile {
    action_profile(bit<32> size);
}

extern void random<_T>(out _T result, in _T lo, in _T hi);

extern void digest<_T>(in bit<32> receiver, in _T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

@pure
extern void hash<_O, _T, _D, _M>(out _O result, in HashAlgorithm algo, in _T base, in _D data, in _M max);

extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<_D>(in _D data);
}

extern void verify_checksum<_T, _O>(in bool condition, in _T data, in _O checksum, HashAlgorithm algo);
@pure
extern void update_checksum<_T, _O>(in bool condition, in _T data, inout _O checksum, HashAlgorithm algo);
extern void verify_checksum_with_payload<_T, _O>(in bool condition, in _T data, in _O checksum, HashAlgorithm algo);
@noSideEffects
extern void update_checksum_with_payload<_T, _O>(in bool condition, in _T data, inout _O checksum, HashAlgorithm algo);

extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<_T>(in _T data);
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<_T>(in _T data);
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<_T>(in CloneType type, in bit<32> session, in _T data);
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

extern void truncate(in bit<32> length);

extern void assert(in bool check);
extern void assume(in bool check);

extern void log_msg(string msg);
extern void log_msg<_T>(string msg, in _T data);

parser Parser<_H, _M>(packet_in b,
                      out _H parsedHdr,
                      inout _M meta,
                      inout standard_metadata_t standard_metadata);

control VerifyChecksum<_H, _M>(inout _H hdr, inout _M meta);

@pipeline
control Ingress<_H, _M>(inout _H hdr, inout _M meta, inout standard_metadata_t standard_metadata);

@pipeline
control Egress<_H, _M>(inout _H hdr, inout _M meta, inout standard_metadata_t standard_metadata);

control ComputeChecksum<_H, _M>(inout _H hdr, inout _M meta);

@deparser
control Deparser<_H>(packet_out b, in _H hdr);

package V1Switch<_H, _M>(Parser<_H, _M> p,
                         VerifyChecksum<_H, _M> vr,
                         Ingress<_H, _M> ig,
                         Egress<_H, _M> eg,
                         ComputeChecksum<_H, _M> ck,
                         Deparser<_H> dep);

#endif
