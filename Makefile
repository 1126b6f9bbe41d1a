# The two commands: `make demo` and `make test` (see README.md). Both set the machine up first.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?= -c release

.PHONY: demo test setup build clean

setup:
	scripts/setup.sh

build: setup
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

demo: build
	$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)/vfx demo

# Tests run optimized: the numeric code is 10-100x slower in debug builds.
test:
	scripts/setup.sh --python
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) -Xswiftc -enable-testing --build-tests
	$(SWIFT) test $(SWIFT_BUILD_FLAGS) -Xswiftc -enable-testing --skip-build

clean:
	rm -rf .build demo-output
