# Compiler flags for host code whose functions bpfrt hooks with fentry,
# fexit, fmod_ret and fentry.multi. Include this file and add
# one set to the CFLAGS of the objects to hook (not to bpfrt itself).
#
# bpfrt patches a function's entry while other threads run it, so the entry
# must be ONE 5-byte nop (replaced by `call trampoline` with breakpoint-first
# cross-modification). What the compilers emit:
#
#   clang -fpatchable-function-entry=5      one nop5 at the entry, recorded in
#                                           __patchable_function_entries
#   clang -fpatchable-function-entry=21,16  16 one-byte nops before the entry
#                                           (fentry.multi keeps a 4-byte index
#                                           there: the padding path) + the nop5;
#                                           16 keeps entries 16-byte aligned
#   gcc -fno-pic -pg -mfentry -mnop-mcount -mrecord-mcount
#                                           one nop5 at the entry, recorded in
#                                           __mcount_loc; gcc refuses
#                                           -mnop-mcount with -fPIC/-fPIE, so
#                                           only for non-PIE executables
#                                           (link with -no-pie)
#   gcc ... -fpatchable-function-entry=16,16  the same plus 16 bytes of padding
#
# gcc's own -fpatchable-function-entry=5 emits five 1-byte nops: a thread
# preempted between two of them would resume inside the new call, so bpfrt
# finds those functions but refuses to attach to them. Use clang for
# libraries and PIE executables. Functions must keep their symbol
# (.symtab or .dynsym: do not strip the file, or export them) and must not
# be inlined at the call sites you want to see (noinline, or calls through
# other objects). Functions with stack-passed arguments (more than six
# integer arguments) work with fentry only.
BPFRT_HOST_CLANG_CFLAGS     := -fpatchable-function-entry=5
BPFRT_HOST_CLANG_PAD_CFLAGS := -fpatchable-function-entry=21,16
BPFRT_HOST_GCC_CFLAGS       := -fno-pic -pg -mfentry -mnop-mcount -mrecord-mcount
BPFRT_HOST_GCC_PAD_CFLAGS   := $(BPFRT_HOST_GCC_CFLAGS) -fpatchable-function-entry=16,16

# CO-RE against the host's own types: BPF programs that read host structs
# through BPF_CORE_READ (preserve_access_index) are relocated at load
# against the BTF of the host build they run in, given to
# bpfrt_object_open as btf_custom_path. Generate it from the host's DWARF
# with pahole (Debian's dwarves), from each object or the linked binary:
#   cc -g ... -c host.c -o host.o
#   pahole --btf_encode_detached=host.btf host.o   # a raw BTF file
#   pahole -J host.o                               # or .BTF inside the ELF file
# Either file works as btf_custom_path. The types bpfrt's own contexts use
# (struct pt_regs, struct trace_entry) need no file.
BPFRT_HOST_BTF_CFLAGS := -g
