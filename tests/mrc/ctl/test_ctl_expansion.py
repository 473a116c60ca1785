"""EV expansion and validation against the public worked examples and every validation rule."""

from __future__ import annotations

import errno
import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrc.ctl import EvField, EvFmtField, EvFmtMode, Expander, MrcCtlError, expand_ev, wire_ev
from mrc.ctl.expansion import gather_bits, scatter_bits

STEV2x16 = [EvFmtField(16), EvFmtField(16)]
SRV6_5 = [EvFmtField(32)] + [EvFmtField(16)] * 4


def _ev(*octets: int) -> bytes:
    return bytes(octets)


def test_public_stev_worked_example() -> None:
    fields = [EvField(16, 0x1000, 0, 0xFF, 0x0F0F), EvField(16, 0x2000, 0, 0xFF, 0x0F0F)]
    exp = Expander.build(EvFmtMode.STEV, STEV2x16, fields)
    assert exp.field_values(_ev(0x33, 0x12)) == [0x1303, 0x2102]
    out = exp.expand(_ev(0x33, 0x12))
    assert out[:4] == bytes.fromhex("13032102") and out[4:] == bytes(28)
    w = wire_ev(EvFmtMode.STEV, out, exp.expanded_bits)
    assert (w.udp_sport, w.flow_label_low16) == (0x1303, 0x2102)


def test_public_srv6_worked_example() -> None:
    fields = [EvField(32, 0x13131313)] + [EvField(16, i << 8, 1, 0xF, 0x000F) for i in range(1, 5)]
    out = expand_ev(EvFmtMode.SRV6, SRV6_5, fields, _ev(0x9B, 0x79))
    assert ipaddress.IPv6Address(out[:16]) == ipaddress.IPv6Address("1313:1313:0109:020b:0307:0409::")
    w = wire_ev(EvFmtMode.SRV6, out, 96)
    assert w.srv6_dst == out[:16] and w.srh_segment is None


def test_full_mask_fields_copy_ev_bits() -> None:
    # ev_expansion.c "STEV explicit": two 16-bit fields, full masks: the EV is the wire value.
    fields = [EvField(16, 0, 0, 0, 0xFFFF)] * 2
    assert expand_ev(EvFmtMode.STEV, STEV2x16, fields, _ev(0xAB, 0xCD, 0x12, 0x34))[:4] == _ev(0xAB, 0xCD, 0x12, 0x34)


def test_stev_generated_full_width_field() -> None:
    # ev_expansion.c "Structured EV Generated": one 32-bit field, full mask: the EV is the wire value.
    exp = Expander.build(EvFmtMode.STEV, [EvFmtField(32)], [EvField(32, 0, 0, 0, 0xFFFFFFFF)])
    out = exp.expand(_ev(0xDE, 0xAD, 0xBE, 0xEF))
    assert out[:4] == _ev(0xDE, 0xAD, 0xBE, 0xEF) and out[4:] == bytes(28)
    w = wire_ev(EvFmtMode.STEV, out, exp.expanded_bits)
    assert (w.udp_sport, w.flow_label_low16) == (0xDEAD, 0xBEEF)


def test_stev_generated_with_fixed_bits() -> None:
    # ev_expansion.c "Structured EV Generated w/ Fixed": 2 x 16-bit fields, init (i+1)<<8, mask 0x000f:
    # two 4-bit draws packed in one EV byte land in each field's low nibble.
    fields = [EvField(16, (i + 1) << 8, 1, 0xF, 0x000F) for i in range(2)]
    exp = Expander.build(EvFmtMode.STEV, STEV2x16, fields)
    assert exp.field_values(_ev(0x3C)) == [0x0103, 0x020C]
    assert exp.expand(_ev(0x3C))[:4] == bytes.fromhex("0103020c")
    assert exp.compact([0x3, 0xC])[:1] == _ev(0x3C)


def test_fixed_locator_field_consumes_no_bits() -> None:
    # ev_expansion.c "SRv6 explicit": fixed 32-bit locator (mask 0) and four full-mask uSIDs.
    fields = [EvField(32, 0xCAFECAFE)] + [EvField(16, 0, 0, 0, 0xFFFF)] * 4
    out = expand_ev(EvFmtMode.SRV6, SRV6_5, fields, bytes.fromhex("0001000200030004"))
    assert ipaddress.IPv6Address(out[:16]) == ipaddress.IPv6Address("cafe:cafe:1:2:3:4::")


def test_fewer_fields_than_format_leave_trailing_format_fields_zero() -> None:
    # ev_expansion.c "SRv6 explicit (subset)": 3 of 5 format fields used.
    fields = [EvField(32, 0xDEADDEAD)] + [EvField(16, 0, 0, 0, 0xFFFF)] * 2
    out = expand_ev(EvFmtMode.SRV6, SRV6_5, fields, bytes.fromhex("beef0042"))
    assert ipaddress.IPv6Address(out[:16]) == ipaddress.IPv6Address("dead:dead:beef:42::")


def test_narrow_field_is_right_aligned_in_wider_format_field() -> None:
    # ev_expansion.c "SRv6 generated": 4-bit fields inside 16-bit format fields.
    fields = [EvField(32, 0x42424242)] + [EvField(4, 0, 1, 0xF, 0xF)] * 4
    out = expand_ev(EvFmtMode.SRV6, SRV6_5, fields, _ev(0x12, 0x3F))
    assert ipaddress.IPv6Address(out[:16]) == ipaddress.IPv6Address("4242:4242:1:2:3:f::")


def test_srv6_with_srh_segment_uses_bytes_16_to_31() -> None:
    # ev_expansion.c "SRv6+SRH explicit": 32+6x16 in the destination, 32+2x16 in the SRH segment.
    fmt = [EvFmtField(32)] + [EvFmtField(16)] * 6 + [EvFmtField(32)] + [EvFmtField(16)] * 2
    fields = ([EvField(32, 0xCAFECAFE)] + [EvField(16, 0, 0, 0, 0xFFFF)] * 6 + [EvField(32, 0xDECAFBAD)]
              + [EvField(16, 0, 0, 0, 0xFFFF)] * 2)
    ev = bytes.fromhex("0001000200030004000500060007" "0008")
    exp = Expander.build(EvFmtMode.SRV6, fmt, fields)
    out = exp.expand(ev)
    w = wire_ev(EvFmtMode.SRV6, out, exp.expanded_bits)
    assert ipaddress.IPv6Address(w.srv6_dst) == ipaddress.IPv6Address("cafe:cafe:1:2:3:4:5:6")
    assert w.srh_segment is not None
    assert ipaddress.IPv6Address(w.srh_segment) == ipaddress.IPv6Address("deca:fbad:7:8::")


def test_udp_mode_puts_16_bits_in_source_port() -> None:
    out = expand_ev(EvFmtMode.UDP, [EvFmtField(16)], [EvField(16, 0xC000, 0, 0, 0x00FF)], _ev(0x5A))
    assert wire_ev(EvFmtMode.UDP, out, 16).udp_sport == 0xC05A


def test_non_contiguous_mask_msb_first() -> None:
    # mask 0b1010_0101: four bits 1 0 1 1 go to bit positions 7, 5, 2, 0 in that order.
    exp = Expander.build(EvFmtMode.STEV, [EvFmtField(8)], [EvField(8, 0, 0, 0, 0xA5)])
    assert exp.field_values(_ev(0b1011_0000)) == [0b1000_0101]


def test_bits_beyond_cursor_must_be_zero() -> None:
    fields = [EvField(16, 0x1000, 0, 0xFF, 0x0F0F), EvField(16, 0x2000, 0, 0xFF, 0x0F0F)]
    exp = Expander.build(EvFmtMode.STEV, STEV2x16, fields)
    with pytest.raises(MrcCtlError) as ei:
        exp.expand(_ev(0x33, 0x12, 0x01))
    assert ei.value.errno == errno.EINVAL
    with pytest.raises(MrcCtlError):
        exp.expand(bytes(31) + b"\x01")


# ---------------------------------------------------------------- validation rules (one test each)
def _err(mode: EvFmtMode, fmt: list[EvFmtField], fields: list[EvField]) -> int:
    with pytest.raises(MrcCtlError) as ei:
        Expander.build(mode, fmt, fields)
    return ei.value.errno


def test_rule_field_count_within_format() -> None:
    assert _err(EvFmtMode.STEV, [EvFmtField(32)], [EvField(16), EvField(16)]) == errno.E2BIG


def test_rule_total_width_within_format() -> None:
    assert _err(EvFmtMode.STEV, [EvFmtField(8), EvFmtField(8)], [EvField(8), EvField(9)]) == errno.E2BIG


def test_rule_field_width_within_its_format_field() -> None:
    assert _err(EvFmtMode.STEV, [EvFmtField(8), EvFmtField(24)], [EvField(16), EvField(8)]) == errno.E2BIG


def test_rule_init_val_fits_width() -> None:
    assert _err(EvFmtMode.STEV, STEV2x16, [EvField(8, init_val=0x100)]) == errno.EINVAL
    Expander.build(EvFmtMode.STEV, STEV2x16, [EvField(8, init_val=0xFF)])


def test_rule_mask_fits_width() -> None:
    assert _err(EvFmtMode.STEV, STEV2x16, [EvField(8, mask=0x1FF)]) == errno.EINVAL


def test_rule_max_val_below_two_to_popcount_mask() -> None:
    assert _err(EvFmtMode.STEV, STEV2x16, [EvField(8, max_val=16, mask=0x0F)]) == errno.EINVAL
    Expander.build(EvFmtMode.STEV, STEV2x16, [EvField(8, max_val=15, mask=0x0F)])
    assert _err(EvFmtMode.STEV, STEV2x16, [EvField(8, max_val=1, mask=0)]) == errno.EINVAL


def test_rule_min_val_not_above_max_val() -> None:
    assert _err(EvFmtMode.STEV, STEV2x16, [EvField(8, min_val=9, max_val=8, mask=0x0F)]) == errno.EINVAL


def test_rule_field_width_range() -> None:
    assert _err(EvFmtMode.SRV6, SRV6_5, [EvField(0)]) == errno.EINVAL
    assert _err(EvFmtMode.SRV6, [EvFmtField(64)], [EvField(33)]) == errno.EINVAL


def test_rule_no_fields() -> None:
    assert _err(EvFmtMode.STEV, STEV2x16, []) == errno.EINVAL


def test_rule_compact_width_within_device_limit() -> None:
    with pytest.raises(MrcCtlError) as ei:
        Expander.build(EvFmtMode.STEV, STEV2x16, [EvField(16, mask=0xFFFF)] * 2, max_width=24)
    assert ei.value.errno == errno.E2BIG


@pytest.mark.parametrize(("mode", "widths"), [(EvFmtMode.STEV, [16, 17]), (EvFmtMode.UDP, [17]),
                                               (EvFmtMode.SRV6, [128, 129])])
def test_format_total_width_per_mode(mode: EvFmtMode, widths: list[int]) -> None:
    assert _err(mode, [EvFmtField(w) for w in widths], [EvField(1)]) == errno.E2BIG


def test_format_field_width_zero_is_invalid() -> None:
    assert _err(EvFmtMode.STEV, [EvFmtField(0)], [EvField(1)]) == errno.EINVAL


# ---------------------------------------------------------------- properties
masks = st.integers(0, 0xFFFF)


@settings(deadline=None)  # a GC or a busy CI core must not fail a property
@given(mask=masks, init=st.integers(0, 0xFFFF), bits=st.integers(0, 0xFFFF))
def test_scatter_then_gather_roundtrip(mask: int, init: int, bits: int) -> None:
    bits &= (1 << mask.bit_count()) - 1
    v = scatter_bits(init, mask, bits)
    assert gather_bits(v, mask) == bits
    assert v & ~mask == init & ~mask


@settings(deadline=None)
@given(m1=masks, m2=masks, data=st.data())
def test_compact_then_expand_roundtrip(m1: int, m2: int, data: st.DataObject) -> None:
    fields = [EvField(16, 0x0F0F & ~m1, 0, 0, m1), EvField(16, 0xF0F0 & ~m2, 0, 0, m2)]
    exp = Expander.build(EvFmtMode.STEV, STEV2x16, fields)
    draws = [data.draw(st.integers(0, (1 << f.mask.bit_count()) - 1)) for f in fields]
    ev = exp.compact(draws)
    assert exp.compact_values(ev) == draws
    out = exp.expand(ev)
    assert [int.from_bytes(out[0:2], "big"), int.from_bytes(out[2:4], "big")] == exp.field_values(ev)
