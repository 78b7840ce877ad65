/* A library test_symbols loads with dlopen after its first lookups, so
 * the symbol table has to notice a module that came later. Never linked
 * into a test. */
__attribute__((noinline)) int sym_late_answer(int x)
{
	return x * 6 + 1;
}

/* Static: only in .symtab. */
static __attribute__((noinline, noclone, used)) int sym_late_static(int x)
{
	return x ^ 0x5a5a;
}

int sym_late_call_static(int x)
{
	return sym_late_static(x) + 1;
}
