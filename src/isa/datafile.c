/* STUB: replaced by the .data reader. */
#include "isa/datafile.h"
#include "core/error.h"
#include <string.h>
int bpfrt_datafile_parse(const char *text, struct bpfrt_datafile *df)
{ memset(df, 0, sizeof(*df)); return bpfrt_err(-ENOTSUP, "datafile: not built yet"); }
int bpfrt_datafile_load(const char *path, struct bpfrt_datafile *df)
{ memset(df, 0, sizeof(*df)); return bpfrt_err(-ENOTSUP, "datafile: not built yet"); }
void bpfrt_datafile_free(struct bpfrt_datafile *df) { (void)df; }
