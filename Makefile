# The two commands: `make demo` and `make test` (see README.md). Both set the machine up first.
# `make install` puts `vfx` on the PATH: $(DESTDIR)$(PREFIX)/bin/vfx (PREFIX defaults to /usr/local).
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?= -c release
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin

.PHONY: demo test setup build install uninstall clean

setup:
	scripts/setup.sh

build: setup
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

demo: build
	$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)/vfx demo

# Tests run optimized: the numeric code is 10-100x slower in debug builds. Then the kernels' portable code (what
# arm64 runs) is tested in a second release build without the AVX2 intrinsics (docs/building.md), and docs/porting.md's Swift blocks
# are built as a client package of the library (a debug build: about 4 minutes on a busy 2-core machine).
test:
	scripts/setup.sh --python
	$(SWIFT) build $(SWIFT_BUILD_FLAGS) -Xswiftc -enable-testing --build-tests
	$(SWIFT) test $(SWIFT_BUILD_FLAGS) -Xswiftc -enable-testing --skip-build
	SWIFT=$(SWIFT) scripts/test-portable.sh
	SWIFT=$(SWIFT) scripts/check-porting.sh

# The release binary links FFmpeg's shared libraries from Debian and the Swift runtime from the
# toolchain (found through its rpath), so the toolchain stays where it was installed.
install: build
	install -d "$(DESTDIR)$(BINDIR)"
	install -m 755 "$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path)/vfx" "$(DESTDIR)$(BINDIR)/vfx"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/vfx"

clean:
	rm -rf .build demo-output
