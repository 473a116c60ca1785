# mrc-fabric build, data-plane test and Docker (bmv2 + p4c) entry points.  `make help` lists them.
#
# Variables (override on the command line or in the environment):
#   TARGET       switch target for ptf / ptf-fabric: softswitch or bmv2 (unset: the runners' default,
#                mrc_fabric.targets.DEFAULT_TARGET, softswitch)
#   PYTHON (PY)  interpreter: .venv/bin/python (scripts/setup.sh makes it), else python3
#   P4C          the p4c bmv2 back end (default p4c-bm2-ss); `make build` uses it when it is on PATH
#   BUILD_DIR    (command line only) output folder of `make build`; the runners read build/mrc_switch
#   PTF_ARGS     extra arguments for the PTF runners, e.g. PTF_ARGS="--test srv6"
#   DOCKER, DOCKER_IMAGE, DOCKER_BASE_TAG   see docs/targets.md

SHELL := /bin/bash
.DELETE_ON_ERROR:

PROG      := mrc_switch
P4_MAIN   := p4src/$(PROG).p4
P4_SRCS   := $(shell find p4src -name '*.p4')
BUILD_DIR := build/$(PROG)
P4C       ?= p4c-bm2-ss
TARGET    ?=
# the runners take --target from TARGET when it is set, else their own default (fabric/targets)
TARGET_ARG = $(if $(TARGET),--target $(TARGET))
PY        ?=
PYTHON    ?= $(or $(PY),$(firstword $(wildcard .venv/bin/python)),python3)
PTF_ARGS  ?=
HAVE_P4C  := $(shell command -v $(P4C) 2>/dev/null)
# softswitch's compiler is part of the build when it is the compiler in use
SOFTSWITCH_SRCS := $(shell find softswitch -name '*.py' -o -name '*.lark' -o -name '*.p4')
PTF_FABRIC_RUN  := ptf_tests/run_fabric.py

ifneq ($(HAVE_P4C),)
BUILD_OUT := $(BUILD_DIR)/bmv2.json
else
BUILD_OUT := $(BUILD_DIR)/softswitch.json
endif

DOCKER          ?= docker
DOCKER_IMAGE    ?= mrc-fabric:bmv2
DOCKER_BASE_TAG ?= p4lang/p4c:1.2.5.15
DOCKER_LOCK     := docker/base-image.lock
DOCKER_RUN       = $(DOCKER) run --rm --privileged -e TARGET=bmv2 $(if $(shell [ -t 0 ] && echo y),-it) \
                   $(DOCKER_IMAGE)

.PHONY: help build contract ptf ptf-fabric ptf-softswitch clean docker-pin docker-build docker-test docker-demo docker-ptf \
        docker-shell

help:  ## list the targets
	@echo "mrc-fabric make targets (TARGET=$(or $(TARGET),default), PYTHON=$(PYTHON)):"
	@grep -E '^[a-z][a-z0-9-]*:.*## ' $(firstword $(MAKEFILE_LIST)) | \
	    sed -E 's/^([a-z0-9-]+):.*## (.*)/  \1\t\2/' | expand -t 18

# An up-to-date output made outside make (`softswitch compile ... -o build/mrc_switch`, as the README
# shows) has no COMPILER record: the output file names its compiler (bmv2.json: p4c, softswitch.json:
# softswitch), so record that rather than print an empty name.
build: $(BUILD_OUT)  ## compile p4src/mrc_switch.p4 into build/mrc_switch/ (p4c when present, else softswitch)
	@test -s $(BUILD_DIR)/COMPILER || echo "$(if $(HAVE_P4C),p4c,softswitch)" > $(BUILD_DIR)/COMPILER
	@echo "build: $(BUILD_DIR)/ ready (compiler: $$(cat $(BUILD_DIR)/COMPILER))"

$(BUILD_DIR)/bmv2.json: $(P4_SRCS)
	@mkdir -p $(BUILD_DIR)
	@echo "build: compiling $(P4_MAIN) with $(P4C) ($(HAVE_P4C), v1model): bmv2.json, p4info.txtpb, $(PROG).pp.p4"
	$(P4C) --arch v1model -o $(BUILD_DIR)/bmv2.json \
	    --p4runtime-files $(BUILD_DIR)/p4info.txtpb \
	    --pp $(BUILD_DIR)/$(PROG).pp.p4 $(P4_MAIN)
	@echo "p4c" > $(BUILD_DIR)/COMPILER

$(BUILD_DIR)/softswitch.json: $(P4_SRCS) $(SOFTSWITCH_SRCS)
	@mkdir -p $(BUILD_DIR)
	@echo "build: $(P4C) is not on PATH; compiling $(P4_MAIN) with softswitch: p4info.txtpb, softswitch.json (no bmv2.json)"
	$(PYTHON) -m softswitch compile $(P4_MAIN) -o $(BUILD_DIR)
	@echo "softswitch" > $(BUILD_DIR)/COMPILER

contract: build  ## regenerate controller/p4contract.py (names + constants) from build/'s P4Info and define.p4
	$(PYTHON) -m controller.gen_p4contract --p4info $(BUILD_DIR)/p4info.txtpb

ptf: build  ## run ptf_tests/mrc_switch against TARGET (root: veth interfaces)
	$(PYTHON) ptf_tests/run.py $(TARGET_ARG) $(PTF_ARGS)

ptf-fabric: build  ## run the fabric PTF suite (issue 7) against TARGET (root)
	$(PYTHON) $(PTF_FABRIC_RUN) $(TARGET_ARG) $(PTF_ARGS)

ptf-softswitch:  ## run the target acceptance PTF suite (ptf_tests/softswitch, own programs) against TARGET
	$(PYTHON) ptf_tests/run_softswitch.py $(TARGET_ARG) $(PTF_ARGS)

clean:  ## remove build/
	rm -rf build

# --- Docker: p4c + bmv2 simple_switch_grpc + this project (docs/targets.md) ----------------------
docker-pin:  ## resolve DOCKER_BASE_TAG to a digest and write docker/base-image.lock (commit it)
	$(DOCKER) pull $(DOCKER_BASE_TAG)
	@ref=$$($(DOCKER) inspect --format '{{index .RepoDigests 0}}' $(DOCKER_BASE_TAG)) && \
	    digest=$${ref#*@} && [[ $$digest =~ ^sha256:[0-9a-f]{64}$$ ]] || \
	    { echo "docker-pin: no repo digest for $(DOCKER_BASE_TAG) (got '$$ref')" >&2; exit 1; }; \
	    echo "$(DOCKER_BASE_TAG)@$$digest" > $(DOCKER_LOCK); \
	    echo "docker-pin: $(DOCKER_LOCK) = $$(cat $(DOCKER_LOCK)); commit it so every build uses this image"

docker-build:  ## build the image (mrc-fabric:bmv2) FROM the digest in docker/base-image.lock (pins first if missing)
	@test -s $(DOCKER_LOCK) || $(MAKE) --no-print-directory docker-pin
	@grep -Eqx '[^@[:space:]]+@sha256:[0-9a-f]{64}' $(DOCKER_LOCK) || \
	    { echo "docker-build: $(DOCKER_LOCK) is not 'image@sha256:<64 hex>'; run make docker-pin" >&2; exit 1; }
	$(DOCKER) build -f docker/Dockerfile --build-arg BASE_IMAGE=$$(cat $(DOCKER_LOCK)) -t $(DOCKER_IMAGE) .

docker-test: docker-build  ## the README test command on bmv2 in a privileged container
	$(DOCKER_RUN) bash -c 'make build && bash scripts/test.sh'

docker-demo: docker-build  ## mrc-fabric demo --target bmv2 in a privileged container
	$(DOCKER_RUN) bash -c 'make build && mrc-fabric demo --target bmv2'

docker-ptf: docker-build  ## make ptf and make ptf-fabric with TARGET=bmv2 in a privileged container
	$(DOCKER_RUN) bash -c 'make ptf TARGET=bmv2 && make ptf-fabric TARGET=bmv2'

docker-shell: docker-build  ## an interactive shell in the image (TARGET=bmv2)
	$(DOCKER) run --rm --privileged -it -e TARGET=bmv2 $(DOCKER_IMAGE) bash
