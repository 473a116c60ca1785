# mrc-fabric build and data-plane test entry points.
#
#   make build            compile p4src/mrc_switch.p4 into build/mrc_switch/
#                         (p4c-bm2-ss when it is on PATH, otherwise softswitch's compiler)
#   make ptf              run ptf_tests/ against softswitch (needs root: veth interfaces)
#   make ptf TARGET=bmv2  the same tests against bmv2 simple_switch_grpc
#   make clean            remove build/
#
# Variables: PYTHON (default: /opt/mrcvenv/bin/python when present), P4C, TARGET, PTF_ARGS
# (extra arguments for ptf_tests/run.py, e.g. PTF_ARGS="--test srv6").

PROG      := mrc_switch
P4_MAIN   := p4src/$(PROG).p4
P4_SRCS   := $(shell find p4src -name '*.p4')
BUILD_DIR := build/$(PROG)
P4C       ?= p4c-bm2-ss
TARGET    ?= softswitch
PYTHON    ?= $(shell test -x /opt/mrcvenv/bin/python && echo /opt/mrcvenv/bin/python || echo python3)
PTF_ARGS  ?=

.PHONY: build ptf clean

build: $(BUILD_DIR)/p4info.txtpb

$(BUILD_DIR)/p4info.txtpb: $(P4_SRCS)
	@mkdir -p $(BUILD_DIR)
	@if command -v $(P4C) >/dev/null 2>&1; then \
	    echo "build: compiling $(P4_MAIN) with $(P4C) (p4c, v1model)"; \
	    $(P4C) --arch v1model -o $(BUILD_DIR)/bmv2.json \
	        --p4runtime-files $(BUILD_DIR)/p4info.txtpb \
	        --pp $(BUILD_DIR)/$(PROG).pp.p4 $(P4_MAIN) && \
	    echo "p4c" > $(BUILD_DIR)/COMPILER; \
	else \
	    echo "build: $(P4C) not on PATH; compiling $(P4_MAIN) with softswitch (P4Info and device config only, no bmv2.json)"; \
	    $(PYTHON) -m softswitch compile $(P4_MAIN) \
	        --p4runtime-files $(BUILD_DIR)/p4info.txtpb && \
	    echo "softswitch" > $(BUILD_DIR)/COMPILER; \
	fi

ptf: build
	$(PYTHON) ptf_tests/run.py --target $(TARGET) $(PTF_ARGS)

clean:
	rm -rf build
