/* Source lines of a linked program from the object's .BTF.ext line info,
 * for the verifier's log ("; return p->v[idx]; @ prog.c:11").
 *
 * .BTF.ext (the format libbpf and the kernel read): a header (magic
 * 0xeB9F, version 1, hdr_len, then the offsets and lengths of the func and
 * line info blocks after the header); the line info block is a record
 * size, then per ELF section its name (a BTF string offset), a count and
 * the records: byte offset of the instruction in the section, file name
 * and line text (BTF string offsets), line << 10 | column. The linker
 * placed runs of section instructions in the program (struct obj_range);
 * each record lands where its instruction did. Everything is
 * bounds-checked: the file is input. A malformed or missing block gives a
 * program without lines, never an error. */
#include "loader/object.h"

#include <bpf/btf.h>
#include <stdlib.h>
#include <string.h>

#define BTF_EXT_MAGIC 0xeB9F

struct rec {
	uint32_t insn, file_off, line_off, line_col;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static const struct obj_sec *find_sec(const struct bpfrt_object *obj, const char *name,
				      size_t *idx)
{
	for (size_t i = 0; name && i < obj->sec_cnt; i++)
		if (obj->secs[i].name && !strcmp(obj->secs[i].name, name)) {
			*idx = i;
			return &obj->secs[i];
		}
	return NULL;
}

/* The line info block of .BTF.ext, or NULL. */
static const uint8_t *line_block(const struct bpfrt_object *obj, uint32_t *len)
{
	const struct obj_sec *s;
	const uint8_t *d;
	uint32_t hdr_len, off, blen;
	size_t size, idx;

	s = find_sec(obj, ".BTF.ext", &idx);
	if (!s || !s->data || !s->data->d_buf)
		return NULL;
	d = s->data->d_buf;
	size = s->data->d_size;
	if (size < 24 || (d[0] | d[1] << 8) != BTF_EXT_MAGIC || d[2] != 1)
		return NULL;
	hdr_len = rd32(d + 4);
	if (hdr_len < 24 || hdr_len > size)
		return NULL;
	off = rd32(d + 16);
	blen = rd32(d + 20);
	if (off > size - hdr_len || blen > size - hdr_len - off || blen < 4)
		return NULL;
	*len = blen;
	return d + hdr_len + off;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return x->insn < y->insn ? -1 : x->insn > y->insn;
}

static const char *btf_str(const struct btf *btf, uint32_t off)
{
	const char *s = btf__name_by_offset(btf, off);

	return s ? s : "";
}

/* Collects the records whose instructions the ranges placed. */
static int collect(const struct bpfrt_object *obj, const uint8_t *b, uint32_t len,
		   const struct obj_range *ranges, size_t range_cnt, struct rec **out,
		   size_t *cnt)
{
	uint32_t rec_size = rd32(b), pos = 4;
	struct rec *recs = NULL;
	size_t n = 0, cap = 0;

	if (rec_size < 16)
		return -1;
	while (len - pos >= 8) {
		const char *name = btf__name_by_offset(obj->btf, rd32(b + pos));
		uint32_t num = rd32(b + pos + 4);
		size_t sec = 0;
		bool known = find_sec(obj, name, &sec) != NULL;

		pos += 8;
		if (num > (len - pos) / rec_size)
			break;
		for (uint32_t i = 0; i < num; i++, pos += rec_size) {
			const uint8_t *r = b + pos;
			uint32_t at = rd32(r) / 8;

			for (size_t k = 0; known && k < range_cnt; k++) {
				const struct obj_range *g = &ranges[k];

				if (g->sec != sec || at < g->start || at - g->start >= g->len)
					continue;
				if (n == cap) {
					size_t ncap = cap ? 2 * cap : 64;
					struct rec *grown = realloc(recs, ncap * sizeof(*grown));

					if (!grown) {
						free(recs);
						return -1;
					}
					recs = grown;
					cap = ncap;
				}
				recs[n++] = (struct rec){ (uint32_t)(g->pos + at - g->start),
							  rd32(r + 4), rd32(r + 8), rd32(r + 12) };
			}
		}
	}
	*out = recs;
	*cnt = n;
	return 0;
}

void obj_line_info(const struct bpfrt_object *obj, const struct obj_range *ranges,
		   size_t range_cnt, struct bpfrt_prog *prog)
{
	struct bpfrt_line_info *lines;
	struct rec *recs = NULL;
	size_t n = 0, kept = 0, pool_len = 0;
	const uint8_t *b;
	uint32_t len;
	char *pool, *p;

	free(prog->lines);
	free(prog->lines_pool);
	prog->lines = NULL;
	prog->lines_pool = NULL;
	prog->line_cnt = 0;
	if (!obj->btf || !(b = line_block(obj, &len)))
		return;
	if (collect(obj, b, len, ranges, range_cnt, &recs, &n) || !n) {
		free(recs);
		return;
	}
	qsort(recs, n, sizeof(*recs), rec_cmp);
	/* one record per instruction; the file name is copied once per run
	 * of records naming it */
	for (size_t i = 0; i < n; i++) {
		if (kept && recs[kept - 1].insn == recs[i].insn)
			continue;
		recs[kept] = recs[i];
		pool_len += strlen(btf_str(obj->btf, recs[kept].line_off)) + 1;
		if (!kept || recs[kept - 1].file_off != recs[kept].file_off)
			pool_len += strlen(btf_str(obj->btf, recs[kept].file_off)) + 1;
		kept++;
	}
	lines = calloc(kept, sizeof(*lines));
	pool = malloc(pool_len);
	if (!lines || !pool) {
		free(lines);
		free(pool);
		free(recs);
		return;
	}
	p = pool;
	for (size_t i = 0; i < kept; i++) {
		const char *src = btf_str(obj->btf, recs[i].line_off);

		lines[i].insn = recs[i].insn;
		lines[i].line = recs[i].line_col >> 10;
		lines[i].col = recs[i].line_col & 0x3ff;
		if (i && recs[i - 1].file_off == recs[i].file_off) {
			lines[i].file = lines[i - 1].file;
		} else {
			const char *f = btf_str(obj->btf, recs[i].file_off);

			lines[i].file = p;
			memcpy(p, f, strlen(f) + 1);
			p += strlen(f) + 1;
		}
		lines[i].src = p;
		memcpy(p, src, strlen(src) + 1);
		p += strlen(src) + 1;
	}
	free(recs);
	prog->lines = lines;
	prog->line_cnt = (uint32_t)kept;
	prog->lines_pool = pool;
}
