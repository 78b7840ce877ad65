# Installing libbpfrt (included by the Makefile):
#
#   make install [PREFIX=/usr/local] [DESTDIR=DIR]   after `make all`
#   make uninstall [PREFIX=...] [DESTDIR=...]
#
# installs, under DESTDIR + PREFIX:
#   lib/libbpfrt.so.VERSION, libbpfrt.so.MAJOR and libbpfrt.so (links),
#   lib/libbpfrt.a             (hidden symbols still link statically)
#   lib/pkgconfig/libbpfrt.pc  (`pkg-config --cflags --libs libbpfrt`;
#                               --static for libbpfrt.a)
#   include/bpfrt/*.h          the public headers (#include <bpfrt/bpfrt.h>)
#   bin/bpfrt                  the CLI
#   lib/libbpfrt-agent.so      what `bpfrt trace` preloads into a command
#                               (found at ../lib next to bin/bpfrt)
#   share/bpfrt/bpfrt-host.mk  the flags for host code bpfrt hooks (the
#                               .pc file's hostmk variable names it)
# LIBDIR, INCLUDEDIR, BINDIR, DATADIR and PKGCONFIGDIR override the parts
# (e.g. LIBDIR=/usr/lib/x86_64-linux-gnu). The files are the ones `make all`
# built in $(BUILD); only libbpfrt.pc is written here, for this PREFIX.
# The library is not stripped: kprobes read its .symtab to refuse probes
# on bpfrt's own code.
PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(PREFIX)/bin
DATADIR      ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL      ?= install

PUBLIC_HEADERS := $(wildcard include/bpfrt/*.h)
# libbpf, libelf and zlib come through Requires.private; the rest of what
# the library links (Zydis has no .pc file) is named in Libs.private.
PC_LIBS_PRIVATE = $(filter-out -lbpf -lelf -lz,$(LIB_LDLIBS))
# paths under PREFIX are written relative to ${prefix}, so that
# PKG_CONFIG_SYSROOT_DIR and relocated trees work
pc_path = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

.PHONY: install uninstall FORCE
FORCE:

$(BUILD)/libbpfrt.pc: mk/libbpfrt.pc.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_path,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_path,$(INCLUDEDIR))|' \
	    -e 's|@HOSTMK@|$(call pc_path,$(DATADIR))/bpfrt/bpfrt-host.mk|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(PC_LIBS_PRIVATE)|' $< >$@

install: $(BUILD)/libbpfrt.so $(BUILD)/libbpfrt.a $(BUILD)/bpfrt $(BUILD)/libbpfrt.pc \
	$(BUILD)/libbpfrt-agent.so
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/bpfrt \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/bpfrt
	$(INSTALL) -m 755 $(BUILD)/libbpfrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libbpfrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libbpfrt.so
	$(INSTALL) -m 644 $(BUILD)/libbpfrt.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(BUILD)/libbpfrt.pc $(DESTDIR)$(PKGCONFIGDIR)/
	$(INSTALL) -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/bpfrt/
	$(INSTALL) -m 755 $(BUILD)/bpfrt $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(BUILD)/libbpfrt-agent.so $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 mk/bpfrt-host.mk $(DESTDIR)$(DATADIR)/bpfrt/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libbpfrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/libbpfrt.so $(DESTDIR)$(LIBDIR)/libbpfrt.a \
		$(DESTDIR)$(PKGCONFIGDIR)/libbpfrt.pc $(DESTDIR)$(BINDIR)/bpfrt \
		$(DESTDIR)$(LIBDIR)/libbpfrt-agent.so \
		$(DESTDIR)$(DATADIR)/bpfrt/bpfrt-host.mk
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(PUBLIC_HEADERS:include/%=%))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/bpfrt $(DESTDIR)$(DATADIR)/bpfrt 2>/dev/null
