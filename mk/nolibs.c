/* Stand-ins for the libelf and libbpf functions the object loader uses,
 * for cross builds whose target has neither library (riscv64 on Debian 12,
 * which is no Debian 12 architecture). Linked only into such builds' CLI:
 * elf_version() reports no usable libelf, so bpfrt_object_open fails with
 * -ENOTSUP before anything else here is reached; the rest fail safely. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>

unsigned int elf_version(unsigned int version) { return EV_NONE; }
Elf *elf_begin(int fd, Elf_Cmd cmd, Elf *ref) { return NULL; }
int elf_end(Elf *elf) { return 0; }
const char *elf_errmsg(int error) { return "no libelf in this build"; }
Elf_Kind elf_kind(Elf *elf) { return ELF_K_NONE; }
Elf_Data *elf_getdata(Elf_Scn *scn, Elf_Data *data) { return NULL; }
int elf_getshdrnum(Elf *elf, size_t *dst) { return -1; }
int elf_getshdrstrndx(Elf *elf, size_t *dst) { return -1; }
size_t elf_ndxscn(Elf_Scn *scn) { return 0; }
Elf_Scn *elf_nextscn(Elf *elf, Elf_Scn *scn) { return NULL; }
char *elf_strptr(Elf *elf, size_t section, size_t offset) { return NULL; }
GElf_Ehdr *gelf_getehdr(Elf *elf, GElf_Ehdr *dst) { return NULL; }
GElf_Rel *gelf_getrel(Elf_Data *data, int ndx, GElf_Rel *dst) { return NULL; }
GElf_Shdr *gelf_getshdr(Elf_Scn *scn, GElf_Shdr *dst) { return NULL; }
GElf_Sym *gelf_getsym(Elf_Data *data, int ndx, GElf_Sym *dst) { return NULL; }

libbpf_print_fn_t libbpf_set_print(libbpf_print_fn_t fn) { return NULL; }

struct btf *btf__parse_elf(const char *path, struct btf_ext **btf_ext)
{
	errno = ENOTSUP;
	return NULL;
}

void btf__free(struct btf *btf) { }
const struct btf_type *btf__type_by_id(const struct btf *btf, __u32 id) { return NULL; }
const char *btf__name_by_offset(const struct btf *btf, __u32 offset) { return NULL; }
__s32 btf__find_by_name_kind(const struct btf *btf, const char *name, __u32 kind)
{
	return -ENOENT;
}
__s64 btf__resolve_size(const struct btf *btf, __u32 type_id) { return -EINVAL; }
