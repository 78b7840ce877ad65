/* STUB: replaced by the conformance plugin. */
#include <stdio.h>
int main(void) { fprintf(stderr, "not built yet\n"); return 1; }
