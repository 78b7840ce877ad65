/* USDT sites (<sys/sdt.h>) built with plain gcc -O2, probed by
 * test_usdt in its own executable and by test_trace_usdt.sh in usdt_work:
 * arguments that are constants, registers and memory of 1, 2, 4 and 8
 * bytes, signed and unsigned. */
#include <sys/sdt.h>

/* Constants: -4@$-5, 8@$..., -1@$-3 (each becomes an immediate). */
void usdt_consts(void)
{
	STAP_PROBE3(bpfrt_test, consts, -5, 0x123456789aLL, (signed char)-3);
}

/* Registers: the arguments stay where the caller put them. */
__attribute__((noinline)) long usdt_regs(long a, int b, unsigned char c, short d)
{
	DTRACE_PROBE4(bpfrt_test, regs, a, b, c, d);
	return a + b + c + d;
}

/* Memory: volatile locals are read from the stack by the probe's
 * operands (N@OFF(%rsp)). */
__attribute__((noinline)) void usdt_mem(long a, int b, unsigned short c, signed char d)
{
	volatile long va = a;
	volatile int vb = b;
	volatile unsigned short vc = c;
	volatile signed char vd = d;

	STAP_PROBE4(bpfrt_test, mem, va, vb, vc, vd);
}
