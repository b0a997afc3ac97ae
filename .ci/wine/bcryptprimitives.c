/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Go programs
 * under Wine 8.0 (.ci/wine/test). Go 1.24 and later take their random
 * numbers from bcryptprimitives.dll!ProcessPrng, which Wine 8.0 does not
 * have; this one export fills the buffer from RtlGenRandom
 * (advapi32!SystemFunction036), which Wine does have. Built with
 * mingw-w64 into the Wine prefix's system32; never part of a release.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
