"""What bmv2's PI server answers that softswitch does not, fed to the controller's own code.

bmv2's PI server makes the remaining backup primary when the primary's stream ends (docs/targets.md,
"Mastership"); softswitch promotes nobody, so this cannot be shown with a switch here: the session is
fed the arbitration answers PI sends, in order."""
from __future__ import annotations

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from controller.session import SwitchSession


def _arb(code: int, high_low=(0, 10)) -> p4runtime_pb2.MasterArbitrationUpdate:
    a = p4runtime_pb2.MasterArbitrationUpdate(device_id=1)
    a.election_id.high, a.election_id.low = high_low
    a.status.code = code
    return a


def _session(takeover: bool) -> SwitchSession:
    s = SwitchSession("sw", "127.0.0.1:1", 1, 5, takeover=takeover)
    s.stream_up.set()  # as after connect(); no switch is needed to feed it answers
    return s


def test_a_standby_promoted_by_the_switch_does_not_act():
    s = _session(takeover=False)
    s._on_arbitration(_arb(code_pb2.ALREADY_EXISTS))  # backup: A (id 10) is primary
    assert not s.is_primary and not s.may_act
    s._on_arbitration(_arb(code_pb2.OK))  # A's stream ended and PI made this one primary
    assert s.is_primary and not s.may_act
    s._on_arbitration(_arb(code_pb2.ALREADY_EXISTS, (0, 11)))  # A is back: backup again
    s._on_arbitration(_arb(code_pb2.OK))  # promoted again: still passive
    assert not s.may_act


def test_a_session_primary_at_its_own_arbitration_acts_and_takeover_acts_when_promoted():
    first = _session(takeover=False)
    first._on_arbitration(_arb(code_pb2.OK))  # the answer to its own arbitration: primary
    assert first.may_act
    s = _session(takeover=True)
    s._on_arbitration(_arb(code_pb2.ALREADY_EXISTS))
    s._on_arbitration(_arb(code_pb2.OK))  # promoted: with takeover it would have taken over anyway
    assert s.may_act


def test_an_empty_p4info_is_no_pipeline():
    """After a failed push PI answers a config with neither P4Info nor cookie: that is no pipeline
    (the PTF base and the bench read it as a P4Info with nothing in it and failed with a KeyError)."""
    from controller.p4rt import running_p4info

    assert running_p4info(None) is None
    assert running_p4info(p4runtime_pb2.ForwardingPipelineConfig()) is None
    cfg = p4runtime_pb2.ForwardingPipelineConfig()
    cfg.p4info.tables.add().preamble.name = "t"
    assert running_p4info(cfg) is cfg.p4info


def test_an_unknown_pipeline_push_error_names_the_device_id():
    """bmv2's PI server checks no device id itself: a push to the wrong one fails as UNKNOWN from the
    target, with nothing saying why; the error now names the device id and bmv2's default."""
    import grpc

    from controller import p4rt

    class Stub:
        def SetForwardingPipelineConfig(self, req, timeout):
            class Err(grpc.RpcError):
                def code(self):
                    return grpc.StatusCode.UNKNOWN

                def details(self):
                    return "Error when trying to assign device"
            raise Err()

    try:
        p4rt.set_pipeline(Stub(), 3, 1, p4runtime_pb2.ForwardingPipelineConfig().p4info, b"")
    except p4rt.P4RuntimeError as e:
        assert e.code() == grpc.StatusCode.UNKNOWN and "device id 3" in e.details() and "default is 0" in e.details()
    else:
        raise AssertionError("no error")


def test_a_replica_read_back_in_the_other_port_form_is_the_same_replica():
    from controller.reconcile import entity_value as _value

    def session(**port):
        e = p4runtime_pb2.Entity()
        cs = e.packet_replication_engine_entry.clone_session_entry
        cs.session_id = 100
        cs.replicas.add(instance=1, **port)
        return e

    assert _value(session(egress_port=255)) == _value(session(port=(255).to_bytes(2, "big")))
    assert _value(session(egress_port=255)) != _value(session(port=b"\x01"))


def test_a_write_pi_refused_says_why():
    """PI answers a Write with failed updates UNKNOWN with an empty message, the reasons only in the
    per-update errors (device_mgr.cpp, P4ErrorReporter::get_status): the error's text names them (it
    said "Write: UNKNOWN:  (1 failed update)", which is what a PTF test or a script showed on bmv2)."""
    import grpc

    from controller.p4rt import P4RuntimeError, UpdateError

    e = P4RuntimeError("Write", grpc.StatusCode.UNKNOWN, "",
                       (UpdateError(0, code_pb2.UNKNOWN, "Error when creating clone session in target"),))
    assert str(e) == ("Write: UNKNOWN:  (1 failed update): update 0: UNKNOWN Error when creating clone "
                      "session in target")
    many = P4RuntimeError("Write", grpc.StatusCode.UNKNOWN, "",
                          tuple(UpdateError(i, code_pb2.UNIMPLEMENTED, "") for i in range(5)))
    assert str(many).endswith("update 2: UNIMPLEMENTED; ... 2 more")
    # a server that says it in its message (softswitch) is not repeated
    said = P4RuntimeError("Write", grpc.StatusCode.UNKNOWN, "1 of 1 update(s) failed: x",
                          (UpdateError(0, code_pb2.NOT_FOUND, "x"),))
    assert str(said) == "Write: UNKNOWN: 1 of 1 update(s) failed: x (1 failed update)"
