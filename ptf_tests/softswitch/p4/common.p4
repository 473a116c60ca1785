/* Shared declarations of the softswitch acceptance programs (ptf_tests/softswitch). */
#ifndef W3C_COMMON_P4
#define W3C_COMMON_P4

#define ETHERTYPE_TEST 0x88B5   /* IEEE local experimental: the test header follows */
#define ETHERTYPE_IPV4 0x0800

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }

#endif
