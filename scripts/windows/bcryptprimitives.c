// A stand-in for Windows' bcryptprimitives.dll, which Wine 8.0 lacks: Rust's standard library
// (codex.exe, the package's test binaries) takes its random bytes from ProcessPrng there. Only
// the Windows lane's Wine prefix gets it; Windows has the real one.
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); // RtlGenRandom, in advapi32

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
